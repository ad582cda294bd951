package timeline

import (
	"encoding/json"
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

// TestSubSecondRunZooms: a 100 ms run in the default 10 s window is
// titled with its own length, and the first z zooms in.
func TestSubSecondRunZooms(t *testing.T) {
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(60, 8)
	r := handRun()
	v := ansi.Strip(m.View(r))
	if !strings.HasPrefix(v, "Timeline  100ms (whole run)") || m.WindowLabel() != "all" {
		t.Errorf("title %q, label %q", strings.SplitN(v, "\n", 2)[0], m.WindowLabel())
	}
	m.ZoomIn()
	if m.Window() != 50*time.Millisecond {
		t.Errorf("first z: %v, want 50ms", m.Window())
	}
	if v := ansi.Strip(m.View(r)); !strings.HasPrefix(v, "Timeline  50ms ") || strings.Contains(v, "whole run") {
		t.Errorf("after z:\n%s", v)
	}
	// down to a microsecond, labels keep their precision
	for range 20 {
		m.ZoomIn()
	}
	if m.Window() != time.Microsecond || m.WindowLabel() != "1us" {
		t.Errorf("fully zoomed in: %v %q", m.Window(), m.WindowLabel())
	}
	if v := ansi.Strip(m.View(r)); !strings.Contains(v, "99.999ms") || !strings.Contains(v, "<- 1us ->") {
		t.Errorf("1 us window's axis:\n%s", v)
	}
}

// TestPanAndCursorGolden: panning moves the window and the cursor with
// it; the cursor is marked on the axis and its lane.
func TestPanAndCursorGolden(t *testing.T) {
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(60, 8)
	r := handRun()
	m.View(r)
	m.ZoomIn() // 50 ms, following the end: 50..100 ms
	m.View(r)
	m.Pan(-1)
	if t0, t1 := m.Range(r); t0 != 45*ms || t1 != 95*ms {
		t.Errorf("pan left: %d..%d ms", t0/ms, t1/ms)
	}
	for range 20 {
		m.Pan(-1)
	}
	if t0, _ := m.Range(r); t0 != 0 {
		t.Errorf("panned past the start: %d", t0)
	}
	m.MoveLane(2)
	m.View(r)
	golden.Check(t, "pan_cursor_ascii", m.View(r))
	for range 20 {
		m.Pan(1)
	}
	if t0, t1 := m.Range(r); t0 != 50*ms || t1 != 100*ms || !m.follow {
		t.Errorf("panned to the end: %d..%d ms, following %v", t0/ms, t1/ms, m.follow)
	}
}

// TestZoomAroundCursor: the cursor keeps its column when zooming.
func TestZoomAroundCursor(t *testing.T) {
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("sampler/0|")+50, 8)
	r := handRun()
	m.View(r)
	m.MoveCursor(1) // shows it: middle of 0..100 ms
	m.View(r)
	for range 10 {
		m.MoveCursor(-1) // 2 ms a cell: 30 ms
	}
	m.View(r)
	if m.cur != 30*ms {
		t.Fatalf("cursor at %d ns", m.cur)
	}
	c0, _ := m.cursorCell()
	m.ZoomIn()
	m.View(r)
	c1, ok := m.cursorCell()
	if t0, t1 := m.Range(r); t1-t0 != 50*ms || !ok || c1 != c0 {
		t.Errorf("zoom around the cursor: %d..%d, cursor cell %d (was %d)", t0, t1, c1, c0)
	}
}

// TestMarkersShowShortStages: at coarse zoom, 1 ms transfers between
// 99 ms samples fall in cells the samples win; they show as markers.
func TestMarkersShowShortStages(t *testing.T) {
	r := runstate.NewRun("x")
	for i := range int64(50) {
		for _, e := range []profile.Event{span("sample", "sampler/0", i*100*ms, 99*ms), span("transfer", "sampler/0", i*100*ms+99*ms, ms)} {
			r.Add(&e)
		}
	}
	for _, opts := range []common.Options{{NoColor: true, ASCII: true}, {NoColor: true}, {}} {
		m := newModel(opts)
		m.SetSize(len("sampler/0|")+40, 4) // 5 s in 40 cells of 125 ms
		raw := strings.Split(m.View(r), "\n")[1]
		row := ansi.Strip(raw)
		// with color the samples are the markers' background
		samples := strings.Contains(row, m.glyph("sample")) || (m.styles.Color && strings.Contains(raw, "48;"))
		if !strings.Contains(row, "t") || !samples {
			t.Errorf("%+v: transfers or samples missing: %q", opts, raw)
		}
		if opts.NoColor && strings.Contains(row, "tt") {
			t.Errorf("markers in two cells in a row without color: %q", row)
		}
	}
	// at fine zoom the transfers win their cells: no marker, exact cells
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("sampler/0|")+100, 4)
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	row := strings.Split(m.View(r), "\n")[1]
	if want := "|" + strings.Repeat("s", 99) + "t"; !strings.HasSuffix(row, want) {
		t.Errorf("fine zoom: %q", row)
	}
}

// TestSelectDetails: enter on the cursor selects the innermost span
// covering it; its details name it and its attributes.
func TestSelectDetails(t *testing.T) {
	r := handRun()
	e := span("eval", "eval", 100*ms, 10*ms)
	e.Epoch, e.Batch, e.Attrs = 2, 7, json.RawMessage(`{"forwards":3,"mode":"full"}`)
	r.Add(&e)
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("sampler/0|")+55, 8) // 110 ms in 55 cells of 2 ms
	m.View(r)
	// the cursor shows in the middle, 55 ms, on compute: the backward
	// inside train
	if !m.SelectAtCursor(r) || r.Stages.Name(r.Spans.Stage[m.Selected()]) != "backward" {
		t.Fatalf("selected %d", m.Selected())
	}
	for range 25 {
		m.MoveCursor(1) // 105 ms
	}
	m.MoveLane(10) // the last lane: eval
	m.View(r)
	if !m.SelectAtCursor(r) {
		t.Fatal("nothing selected on the eval lane at 105 ms")
	}
	d := ansi.Strip(strings.Join(m.Details(r, 60), "\n"))
	for _, want := range []string{"Span e eval", "lane eval", "epoch 2", "batch 7", "start 100ms",
		"duration 10ms (10000000 ns)", "end 110ms", "attributes: forwards=3, mode=\"full\""} {
		if !strings.Contains(d, want) {
			t.Errorf("details lack %q:\n%s", want, d)
		}
	}
	if m.SelectAtCursor(r) || m.Details(r, 60) != nil {
		t.Error("enter on the selected span did not close its details")
	}
}

// TestMouseOnModel: the wheel zooms around the pointer, a click selects,
// a drag pans, the release ends it; off the cells nothing happens.
func TestMouseOnModel(t *testing.T) {
	r := handRun()
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(len("sampler/0|")+50, 8)
	m.View(r)
	if m.Wheel(0, 1, true) || m.Click(r, 5, 0) {
		t.Error("the label or the header took the mouse")
	}
	x := len("sampler/0|") + 10 // 21 ms
	if !m.Wheel(x, 2, true) || m.Window() != 50*time.Millisecond {
		t.Fatalf("wheel: %v", m.Window())
	}
	m.View(r)
	if c, _ := m.cursorCell(); c != 10 {
		t.Errorf("the pointer's cell moved to %d", c)
	}
	if !m.Click(r, x, 2) || m.Selected() < 0 || r.Lanes.Name(r.Spans.Lane[m.Selected()]) != "sampler/0" {
		t.Fatalf("click selected %d", m.Selected())
	}
	t0, _ := m.Range(r)
	if !m.Drag(x - 10) {
		t.Fatal("drag did not pan")
	}
	if t1, _ := m.Range(r); t1 != t0+10*ms {
		t.Errorf("drag 10 cells left: start %d, was %d", t1, t0)
	}
	m.Release()
	if m.Drag(x - 20) {
		t.Error("panned after the release")
	}
}

// TestBarsGolden: the per-epoch bars of a synthetic run, every stage
// with time in a cell at least; Jump goes to epochs.
func TestBarsGolden(t *testing.T) {
	r := runstate.NewRun("optimized")
	synth.Generate(synth.Options{Run: "optimized", Samplers: 2, Epochs: 3, Batches: 100, Seed: 1}, r.Add)
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(80, 6)
	m.ToggleBars()
	golden.Check(t, "bars_ascii", m.View(r))
	golden.ASCII(t, m.View(r))
	if ep, ok := m.Jump(r, true); !ok || ep != 3 || m.Bars() {
		t.Errorf("G: epoch %d, %v, bars %v", ep, ok, m.Bars())
	}
	m.Digit(2)
	if ep, _ := m.Jump(r, false); ep != 2 {
		t.Errorf("2 g: epoch %d", ep)
	}
	if ep, _ := m.Jump(r, false); ep != 1 {
		t.Errorf("g: epoch %d", ep)
	}
	if _, ok := m.Jump(runstate.NewRun("empty"), false); ok {
		t.Error("jumped in a run without epochs")
	}
}
