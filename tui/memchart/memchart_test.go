package memchart

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

const mib = 1 << 20

// handRun has 12 batches climbing towards a 100 MiB budget, one of which
// ran out of memory and was skipped.
func handRun() *runstate.Run {
	r := runstate.NewRun("baseline")
	peaks := []int64{40, 42, 45, 50, 48, 60, 70, 65, 80, 90, 85, 95}
	for i, p := range peaks {
		e := profile.Event{T: profile.TypeMem, Epoch: 1, Batch: i, Phase: "train", Peak: p * mib, Budget: 100 * mib}
		r.Add(&e)
		if i == 9 {
			o := profile.Event{T: profile.TypeOOM, Epoch: 1, Batch: 10, Requested: 30 * mib, Live: 90 * mib, Budget: 100 * mib, Action: "skip"}
			r.Add(&o)
		}
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

// TestFolded draws 10,000 batches in 40 columns: every column shows the
// range of its 250 peaks (a sawtooth between 10 and 60 MiB, so every
// column spans the whole range), and the chart stays within bounds.
func TestFolded(t *testing.T) {
	r := runstate.NewRun("x")
	for i := range 10000 {
		e := profile.Event{T: profile.TypeMem, Peak: int64(10+i%51) * mib, Budget: 0}
		r.Add(&e)
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(50, 8)
	out := m.View(r)
	lines := strings.Split(out, "\n")
	golden.Check(t, "folded_ascii", out)
	// lines 1..6 are the plot, 41 columns wide; the top of the curve
	// (60 MiB of a 66 MiB top) is in the first row in every column
	if n := strings.Count(lines[1], "*"); n != 41 {
		t.Errorf("row of the maxima has %d stars, want 41: %q", n, lines[1])
	}
	if n := strings.Count(lines[6], "*"); n != 0 {
		t.Errorf("the bottom row (below 10 MiB) has %d stars: %q", n, lines[6])
	}
}

func TestHeader(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(80, 3)
	out := m.View(handRun())
	for _, want := range []string{"peak 95.0 MiB", "budget 100.0 MiB", "1 OOM"} {
		if !strings.Contains(out, want) {
			t.Errorf("header lacks %q: %q", want, out)
		}
	}
	if !strings.Contains(New(common.New(nil, common.Options{})).withSize(40, 4).View(runstate.NewRun("e")), "no mem events") {
		t.Error("empty run: no note")
	}
}

func (m *Model) withSize(w, h int) *Model { m.SetSize(w, h); return m }

func TestTinySizes(t *testing.T) {
	r := handRun()
	for _, opts := range []common.Options{{}, {NoColor: true, ASCII: true}} {
		m := New(common.New(nil, opts))
		for w := 0; w < 30; w++ {
			for h := 0; h < 8; h++ {
				m.SetSize(w, h)
				if !golden.Fits(t, "memory chart", m.View(r), w, h) {
					t.FailNow()
				}
			}
		}
	}
}
