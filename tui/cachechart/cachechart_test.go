package cachechart

import (
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// handRun has two epochs of 12 batches of 1000 input rows each, 4000
// bytes a missed row: the hit rate climbs from 40 % to 85 % in epoch 1
// and stays between 80 % and 90 % in epoch 2.
func handRun() *runstate.Run {
	r := runstate.NewRun("cache")
	hits := []int64{400, 450, 520, 600, 640, 700, 720, 760, 800, 820, 840, 850,
		820, 860, 880, 800, 840, 900, 860, 850, 870, 880, 890, 860}
	for i, h := range hits {
		e := profile.Event{T: profile.TypeCache, Epoch: 1 + i/12, Batch: i % 12, Hits: h, Misses: 1000 - h, BytesH2D: 4000 * (1000 - h)}
		r.Add(&e)
	}
	return r
}

func TestGoldenBraille(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(50, 10)
	golden.Check(t, "hand_braille", m.View(handRun()))
}

func TestGoldenASCII(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(50, 10)
	out := m.View(handRun())
	golden.ASCII(t, out)
	golden.Check(t, "hand_ascii", out)
}

// TestFigures checks the header's figures against the hand run: 18,410
// hits of 24,000 rows (76.7 %), epoch 2's 10,310 of 12,000 (85.9 %),
// 5,590 missed rows of 4000 bytes (22,360,000 bytes, 21.3 MiB).
func TestFigures(t *testing.T) {
	r := handRun()
	if ep, rate := LastEpoch(&r.FeatCache); ep != 2 || math.Abs(rate-10310.0/12000) > 1e-12 {
		t.Errorf("last epoch %d at %v", ep, rate)
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(80, 8)
	head := ansi.Strip(strings.Split(m.View(r), "\n")[0])
	for _, want := range []string{"Cache hit rate", "- 76.7%", "ep 2 85.9%", "H2D 21.3 MiB"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	if Pct(math.NaN()) != "-" || Pct(0.5) != "50.0%" {
		t.Errorf("Pct: %q %q", Pct(math.NaN()), Pct(0.5))
	}
	// the scale is fixed: a run at 100 % draws its curve on the top row
	full := runstate.NewRun("full")
	for i := range 5 {
		e := profile.Event{T: profile.TypeCache, Epoch: 1, Batch: i, Hits: 10}
		full.Add(&e)
	}
	lines := strings.Split(ansi.Strip(m.View(full)), "\n")
	if !strings.HasPrefix(lines[1], "100%|*") || strings.Contains(strings.Join(lines[2:6], ""), "*") {
		t.Errorf("a full cache is not on the top row:\n%s", strings.Join(lines, "\n"))
	}
}

// TestNoEvents: the chart says so, and draws nothing else.
func TestNoEvents(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(40, 6)
	if out := m.View(runstate.NewRun("x")); !strings.Contains(out, "no cache events yet") || strings.Contains(out, "%") {
		t.Errorf("view without events:\n%s", out)
	}
}

// TestFits draws a long synthetic run (folded to column means) at every
// small size: no line is wider or the view taller than its area.
func TestFits(t *testing.T) {
	r := runstate.NewRun("opt")
	synth.Generate(synth.Options{Run: "opt", Epochs: 3, Batches: 400, Samplers: 2, Cache: true, Seed: 1}, r.Add)
	for _, ascii := range []bool{false, true} {
		m := New(common.New(nil, common.Options{NoColor: true, ASCII: ascii}))
		for w := 0; w < 60; w += 3 {
			for h := 0; h < 9; h++ {
				m.SetSize(w, h)
				if !golden.Fits(t, "cache chart", m.View(r), w, h) {
					t.FailNow()
				}
			}
		}
	}
}

// TestCachedUntilCacheEvents: other events leave the drawing as it was;
// a cache event redraws it.
func TestCachedUntilCacheEvents(t *testing.T) {
	r := handRun()
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(50, 8)
	before := m.View(r)
	key := m.key(r)
	e := profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 2, Batch: 12, Dur: 5}
	r.Add(&e)
	if m.View(r) != before || m.key(r) != key {
		t.Error("a span redrew the chart")
	}
	e = profile.Event{T: profile.TypeCache, Epoch: 3, Batch: 0, Hits: 0, Misses: 1000, BytesH2D: 4000000}
	r.Add(&e)
	if m.View(r) == before {
		t.Error("a cache event did not redraw the chart")
	}
}
