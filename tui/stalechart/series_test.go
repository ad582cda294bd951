package stalechart

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

// seriesRun has two layers over two epochs of 20 batches: layer 1's mean
// age climbs from 0 to about 2 steps and drops at the epoch's refresh,
// its max is a step over the mean, rounded up; layer 2 is a step older.
func seriesRun() *runstate.Run {
	r := runstate.NewRun("gas")
	for ep := 1; ep <= 2; ep++ {
		for b := range 20 {
			for layer := 1; layer <= 2; layer++ {
				mean := float64(b)/10 + float64(layer-1)
				e := profile.Event{T: profile.TypeStale, Epoch: ep, Batch: b, Layer: layer, Mean: mean, Max: math.Ceil(mean) + 1,
					Hist: []int64{int64(20 - b), int64(b), int64(layer - 1)}}
				r.Add(&e)
			}
		}
		e := profile.Event{T: profile.TypeHistErr, Epoch: ep, Layer: 1, RelErr: 0.2 / float64(ep)}
		r.Add(&e)
	}
	return r
}

func TestGoldenSeries(t *testing.T) {
	r := seriesRun()
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(70, 14) // the table, the plot under it
	golden.Check(t, "series_70x14", m.View(r))
	m.SetSize(120, 9) // side by side
	golden.Check(t, "series_120x9", m.View(r))
	a := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	a.SetSize(70, 14)
	out := a.View(r)
	golden.ASCII(t, out)
	golden.Check(t, "series_ascii_70x14", out)
}

// TestSeriesFigures: the scale's top is the largest max (layer 2's 4),
// the max marks sit on the row of their value, the table stays when the
// height holds it and not the plot, and the plot alone below that.
func TestSeriesFigures(t *testing.T) {
	r := seriesRun()
	if top := Top(r); top != 4 {
		t.Errorf("top %v, want 4", top)
	}
	if l := r.Layers[2]; len(l.Means) != 40 || l.Maxes[39] != 4 {
		t.Errorf("layer 2 series %d points, last max %v", len(l.Means), l.Maxes[39])
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(60, 10) // the plot alone would fit, the table (4) with a plot (5) too: both
	lines := strings.Split(ansi.Strip(m.View(r)), "\n")
	if !strings.HasPrefix(lines[0], "Staleness  age") || !strings.HasPrefix(lines[4], "Staleness over batches") {
		t.Fatalf("table then plot:\n%s", strings.Join(lines, "\n"))
	}
	// the plot's first row is the top, 4: layer 2's largest maxima
	if !strings.HasPrefix(lines[5], "4|") || !strings.Contains(lines[5], "^") {
		t.Errorf("top row %q", lines[5])
	}
	m.SetSize(60, 6) // the table fits, the plot does not fit beside it
	if out := ansi.Strip(m.View(r)); strings.Contains(out, "over batches") || !strings.Contains(out, "layer") {
		t.Errorf("6 lines: want the table only:\n%s", out)
	}
	m.SetSize(60, 3) // not even the table: it is cut
	if out := ansi.Strip(m.View(r)); !strings.HasPrefix(out, "Staleness  age") {
		t.Errorf("3 lines:\n%s", out)
	}
}

// TestSeriesFits draws a long synthetic GAS-like run at many sizes.
func TestSeriesFits(t *testing.T) {
	r := runstate.NewRun("gas")
	synth.Generate(synth.Options{Run: "gas", Epochs: 3, Batches: 300, Layers: 3, Seed: 1}, r.Add)
	for _, ascii := range []bool{false, true} {
		m := New(common.New(nil, common.Options{NoColor: true, ASCII: ascii}))
		for w := 0; w < 140; w += 7 {
			for h := 0; h < 16; h++ {
				m.SetSize(w, h)
				if !golden.Fits(t, "staleness chart", m.View(r), w, h) {
					t.FailNow()
				}
			}
		}
	}
}

// TestSeriesCached: spans leave the drawing as it was, a stale event and
// a new history error each redraw it.
func TestSeriesCached(t *testing.T) {
	r := seriesRun()
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(70, 14)
	before := m.View(r)
	key := m.key(r)
	e := profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 2, Dur: 5}
	r.Add(&e)
	if m.View(r) != before || m.key(r) != key {
		t.Error("a span redrew the chart")
	}
	e = profile.Event{T: profile.TypeStale, Epoch: 3, Batch: 0, Layer: 1, Mean: 3.5, Max: 4, Hist: []int64{0, 0, 10}}
	r.Add(&e)
	after := m.View(r)
	if after == before {
		t.Error("a stale event did not redraw the chart")
	}
	e = profile.Event{T: profile.TypeHistErr, Epoch: 3, Layer: 1, RelErr: 0.01}
	r.Add(&e)
	if m.View(r) == after {
		t.Error("a history error did not redraw the chart")
	}
}
