package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

const ms = int64(time.Millisecond)

func span(name, lane string, start, dur int64) profile.Event {
	return profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Start: start, Dur: dur}
}

// handRun is a pipelined run over 100 ms: two samplers ahead of the
// trainer, evaluation overlapping at the end.
func handRun() *runstate.Run {
	r := runstate.NewRun("optimized")
	evs := []profile.Event{
		{T: profile.TypeRunStart, Run: "optimized", Variant: "optimized"},
		span("sample", "sampler/0", 0, 20*ms),
		span("sample", "sampler/1", 10*ms, 20*ms),
		span("transfer", "sampler/0", 20*ms, 10*ms),
		span("wait", "compute", 0, 30*ms),
		span("forward", "compute", 30*ms, 20*ms),
		span("backward", "compute", 50*ms, 15*ms),
		span("step", "compute", 65*ms, 5*ms),
		span("train", "compute", 30*ms, 40*ms),
		span("transfer", "sampler/1", 30*ms, 10*ms),
		span("eval", "eval", 60*ms, 40*ms),
	}
	for i := range evs {
		r.Add(&evs[i])
	}
	return r
}

func newModel(opts common.Options) *Model {
	return New(common.New(nil, opts))
}

func TestGoldenNoColor(t *testing.T) {
	m := newModel(common.Options{NoColor: true})
	m.SetSize(60, 8)
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	golden.Check(t, "hand_nocolor", m.View(handRun()))
}

func TestGoldenASCII(t *testing.T) {
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(60, 8)
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	golden.Check(t, "hand_ascii", m.View(handRun()))
}

func TestGoldenColorShowsBlocks(t *testing.T) {
	m := newModel(common.Options{})
	m.SetSize(60, 8)
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	out := m.View(handRun())
	if !strings.Contains(out, "\x1b[") {
		t.Fatalf("no colors in a colored timeline:\n%s", out)
	}
	golden.Check(t, "hand_color", out)
}

func TestSyntheticBaseline(t *testing.T) {
	r := runstate.NewRun("baseline")
	synth.Generate(synth.Options{Run: "baseline", Epochs: 2, Batches: 300, Seed: 1}, r.Add)
	m := newModel(common.Options{NoColor: true})
	m.SetSize(100, 6)
	m.ZoomIn() // 5 s
	golden.Check(t, "synth_baseline", m.View(r))
}

// TestShortRunFits: a run shorter than the window fills the width.
func TestShortRunFits(t *testing.T) {
	r := runstate.NewRun("x")
	for _, e := range []profile.Event{span("sample", "compute", 100*ms, 100*ms), span("train", "compute", 200*ms, 100*ms)} {
		r.Add(&e)
	}
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("compute|")+20, 4) // 10 s window, 200 ms of spans
	out := m.View(r)
	if !strings.Contains(out, "|ssssssssssTTTTTTTTTT") || !strings.Contains(out, "(whole run)") {
		t.Errorf("short run not fitted:\n%s", out)
	}
	if t0, t1 := m.Range(r); t0 != 100*ms || t1 != 300*ms {
		t.Errorf("range %d..%d", t0, t1)
	}
}

// TestCellsExact checks the mapping of spans to cells at millisecond
// scale: over 100 ms in 100 cells, a 1 ms span at 37 ms fills cell 37
// only.
func TestCellsExact(t *testing.T) {
	r := runstate.NewRun("x")
	for _, e := range []profile.Event{span("setup", "compute", 0, ms), span("train", "compute", 37*ms, ms), span("eval", "compute", 99*ms, ms)} {
		r.Add(&e)
	}
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("compute|")+100, 4) // 100 cells of 1 ms
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	lines := strings.Split(m.View(r), "\n")
	row := lines[1]
	cells := row[strings.Index(row, "|")+1:]
	if strings.Index(cells, "T") != 37 || strings.Count(cells, "T") != 1 {
		t.Errorf("train cell: %q", cells)
	}
	if strings.Index(cells, "e") != 99 || strings.Count(cells, "e") != 1 {
		t.Errorf("eval cell: %q", cells)
	}
	if strings.Index(cells, ".") != 0 || strings.Count(cells, ".") != 1 {
		t.Errorf("setup cell: %q", cells)
	}
}

func TestLaneOrder(t *testing.T) {
	var n runstate.Names
	for _, l := range []string{"eval", "sampler/10", "zz", "compute", "sampler/2", "copy"} {
		n.ID(l)
	}
	var got []string
	for _, id := range LaneOrder(&n) {
		got = append(got, n.Name(id))
	}
	if want := "compute copy sampler/2 sampler/10 eval zz"; strings.Join(got, " ") != want {
		t.Errorf("lane order %v, want %s", got, want)
	}
}

// TestTinySizes draws at every small size without panicking and never
// wider or taller than asked.
func TestTinySizes(t *testing.T) {
	r := handRun()
	for _, opts := range []common.Options{{}, {NoColor: true, ASCII: true}} {
		m := newModel(opts)
		for w := 0; w < 30; w++ {
			for h := 0; h < 10; h++ {
				m.SetSize(w, h)
				out := m.View(r)
				checkBox(t, out, w, h)
			}
		}
	}
	m := newModel(common.Options{})
	m.SetSize(40, 5)
	checkBox(t, m.View(runstate.NewRun("empty")), 40, 5)
}

func checkBox(t *testing.T, out string, w, h int) {
	t.Helper()
	if !golden.Fits(t, "timeline", out, w, h) {
		t.FailNow()
	}
}

func TestZoomAndCache(t *testing.T) {
	m := newModel(common.Options{NoColor: true})
	m.SetSize(60, 8)
	r := handRun()
	a := m.View(r)
	m.ZoomIn()
	b := m.View(r)
	if a == b {
		t.Error("zooming in did not change the drawing")
	}
	for range 20 {
		m.ZoomOut()
	}
	if m.Window() != 0 || m.WindowLabel() != "all" {
		t.Errorf("fully zoomed out: %v %q", m.Window(), m.WindowLabel())
	}
	c := m.View(r)
	e := span("train", "compute", 100*ms, 50*ms)
	r.Add(&e)
	if d := m.View(r); d == c {
		t.Error("a new span did not change the drawing")
	}
}

func TestEmptyRun(t *testing.T) {
	m := newModel(common.Options{NoColor: true})
	m.SetSize(50, 5)
	out := m.View(runstate.NewRun("waiting"))
	if !strings.Contains(out, "no spans yet") || strings.Contains(out, "←") || len(strings.Split(out, "\n")) != 5 {
		t.Errorf("empty run:\n%s", out)
	}
}

// TestOOMRow: an allocation that failed is marked on a row of its own at
// its time (an OOM-aborted run used to show no mark in the timeline); a
// guard action is not an OOM and is not marked.
func TestOOMRow(t *testing.T) {
	r := handRun()
	guard := profile.Event{T: profile.TypeGuard, Epoch: 1, Batch: 1, Predicted: 10, Actual: 9, Action: profile.ActionSplit}
	r.Add(&guard)
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(60, 9)
	if out := m.View(r); strings.Contains(out, "OOM") {
		t.Errorf("a guard action is marked as an OOM:\n%s", out)
	}
	oom := profile.Event{T: profile.TypeOOM, Epoch: 1, Batch: 2, Requested: 1 << 20, Budget: 1 << 20, Action: profile.ActionAbort}
	r.Add(&oom)
	out := ansi.Strip(m.View(r))
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "OOM") {
			row = l
		}
	}
	// the event before the oom ends at 100 ms, the end of the window
	if !strings.HasSuffix(strings.TrimRight(row, " "), "X") || strings.Count(row, "X") != 1 {
		t.Errorf("OOM row %q in:\n%s", row, out)
	}
	if !strings.Contains(out, "sampler/0") || !strings.Contains(out, "eval") {
		t.Errorf("the lanes are gone:\n%s", out)
	}
}
