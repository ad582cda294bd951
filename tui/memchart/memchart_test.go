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

// fullBatch is full-batch training of 40 epochs: one training batch and
// one evaluation chunk an epoch, as GCN on Cora records them.
func fullBatch() *runstate.Run {
	r := runstate.NewRun("gcn")
	r.Add(&profile.Event{T: profile.TypeRunStart, Config: []byte(`{"epochs":40,"mem_budget":104857600}`)})
	for ep := 1; ep <= 40; ep++ {
		r.Add(&profile.Event{T: profile.TypeMem, Epoch: ep, Phase: profile.PhaseTrain, Peak: int64(60+ep%5) * mib, Budget: 100 * mib})
		r.Add(&profile.Event{T: profile.TypeMem, Epoch: ep, Phase: profile.PhaseEval, Peak: int64(30+ep%3) * mib, Budget: 100 * mib})
	}
	return r
}

// Training batches and evaluation chunks are separate panes, each
// labelled with its epochs and its count: 40 epochs of full-batch
// training are not "batch 1 … 80".
func TestTrainAndEvalApart(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(70, 9)
	out := m.View(fullBatch())
	golden.Check(t, "fullbatch_ascii", out)
	lines := strings.Split(out, "\n")
	axis := lines[len(lines)-1]
	for _, want := range []string{"ep 1", "40 batches", "ep 40", "40 eval chunks"} {
		if !strings.Contains(axis, want) {
			t.Errorf("axis lacks %q: %q", want, axis)
		}
	}
	if strings.Contains(out, "batch 1") || strings.Contains(out, "80") {
		t.Errorf("training and evaluation on one axis:\n%s", out)
	}
	if !strings.Contains(lines[0], "train peak 64.0 MiB") || !strings.Contains(lines[0], "eval peak 32.0 MiB") {
		t.Errorf("header %q", lines[0])
	}
	// the two panes side by side: a separator in every plot row
	for _, l := range lines[1 : len(lines)-1] {
		if strings.Count(l, "|") != 2 {
			t.Errorf("plot row without its two panes: %q", l)
		}
	}
}

// The budget line is drawn as soon as run_start's config gives one,
// before any mem event.
func TestBudgetBeforeMemEvents(t *testing.T) {
	r := runstate.NewRun("r")
	r.Add(&profile.Event{T: profile.TypeRunStart, Config: []byte(`{"epochs":2,"mem_budget":3145728}`)})
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(50, 6)
	out := m.View(r)
	if !strings.Contains(out, "budget 3.0 MiB") || !strings.Contains(out, "=====") {
		t.Errorf("no budget line before mem events:\n%s", out)
	}
	if !strings.Contains(out, "no mem events yet") {
		t.Errorf("no note:\n%s", out)
	}
}

// A run aborted by an OOM in its first batch (`--mem-budget 3MiB`): no
// mem event, the budget line and an X at what the batch asked for.
func TestOOMAborted(t *testing.T) {
	r := runstate.NewRun("r")
	for _, e := range []profile.Event{
		{T: profile.TypeRunStart, Config: []byte(`{"epochs":2,"mem_budget":3145728}`)},
		{T: profile.TypeOOM, Epoch: 1, Batch: 0, Requested: 2 * mib, Live: 2 * mib, Budget: 3 * mib, Action: profile.ActionAbort},
		{T: profile.TypeRunEnd, Status: profile.StatusOOM, Error: "batch 0: out of memory"},
	} {
		r.Add(&e)
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(50, 8)
	out := m.View(r)
	golden.Check(t, "oom_abort_ascii", out)
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "X 1 OOM at 4.0 MiB") || !strings.Contains(lines[0], "budget 3.0 MiB") {
		t.Errorf("header %q", lines[0])
	}
	// top 4.4 MiB over 6 rows: 4 MiB is the first row, the budget below
	xRow, budgetRow := -1, -1
	for i, l := range lines[1:7] {
		if strings.Contains(l, "X") {
			xRow = i
		}
		if strings.Contains(l, "===") {
			budgetRow = i
		}
	}
	if xRow < 0 || budgetRow < 0 || xRow >= budgetRow {
		t.Errorf("X in row %d, budget in row %d:\n%s", xRow, budgetRow, out)
	}
	if !strings.Contains(lines[7], "ep 1 batch 0") {
		t.Errorf("axis %q", lines[7])
	}
}

// Where the guard acted, its mark sits at the batch's predicted peak,
// above the budget, and the header gives predicted against actual.
func TestGuardPredictedAgainstActual(t *testing.T) {
	r := handRun()
	r.OOMs = nil
	r.Add(&profile.Event{T: profile.TypeGuard, Epoch: 1, Batch: 12, Predicted: 120 * mib, Actual: 70 * mib, Budget: 100 * mib, Action: profile.ActionSplit})
	r.Add(&profile.Event{T: profile.TypeMem, Epoch: 1, Batch: 12, Phase: "train", Peak: 70 * mib, Budget: 100 * mib})
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(90, 10)
	out := m.View(r)
	golden.Check(t, "guard_ascii", out)
	if !strings.Contains(out, "g 1 guard: predicted 120.0 MiB, actual 70.0 MiB") || strings.Contains(out, "OOM") {
		t.Errorf("header:\n%s", out)
	}
	if strings.Count(out, "g") < 2 {
		t.Errorf("no guard mark:\n%s", out)
	}
}

// TestCacheFollowsMemEvents: span events keep the drawing; a memory
// point changed by another rank's event (same count) redraws it.
func TestCacheFollowsMemEvents(t *testing.T) {
	r := runstate.NewRun("ddp")
	r.Add(&profile.Event{T: profile.TypeRunStart, World: 2})
	for b := range 4 {
		r.Add(&profile.Event{T: profile.TypeMem, Epoch: 1, Batch: b, Phase: "train", Peak: 40 * mib, Budget: 100 * mib})
	}
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(50, 8)
	a := m.View(r)
	r.Add(&profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: 1, Dur: 1})
	if m.View(r) != a {
		t.Error("a span event redrew the chart")
	}
	n := r.Mem.Len()
	r.Add(&profile.Event{T: profile.TypeMem, Epoch: 1, Batch: 3, Phase: "train", Peak: 90 * mib, Budget: 100 * mib})
	if r.Mem.Len() != n {
		t.Fatalf("the rank's event made a point of its own (%d points)", r.Mem.Len())
	}
	if b := m.View(r); b == a || !strings.Contains(b, "peak 90.0 MiB") {
		t.Errorf("the folded peak was not drawn:\n%s", b)
	}
}
