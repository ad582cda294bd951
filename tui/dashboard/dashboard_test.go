package dashboard

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func collect(o synth.Options) []profile.Event {
	var evs []profile.Event
	synth.Generate(o, func(e *profile.Event) { evs = append(evs, *e) })
	return evs
}

// twoRuns are a small baseline and an optimized run with histories and
// a few OOMs, both from the synthetic generator.
func twoRuns() []sessions.Track {
	return []sessions.Track{
		{Run: "baseline", Events: collect(synth.Options{Run: "baseline", Epochs: 3, Batches: 200, Seed: 1})},
		{Run: "optimized", Events: collect(synth.Options{Run: "optimized", Epochs: 3, Batches: 200, Samplers: 2, Layers: 2, OOMEvery: 97, Seed: 2})},
	}
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// replayModel opens a dashboard on a replay of tracks with a fake clock.
func replayModel(t testing.TB, opts common.Options, w, h int, tracks []sessions.Track, ropts sessions.ReplayOptions) (*Model, *sessions.FakeClock) {
	t.Helper()
	clock := sessions.NewFakeClock(t0)
	ropts.Clock = clock
	rp, err := sessions.NewReplay(tracks, ropts)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(tracks))
	for i, tr := range tracks {
		names[i] = tr.Run
	}
	c := common.New(nil, opts)
	c.SetSize(w, h)
	m, err := newReplay(c, names, rp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, clock
}

// waitEvents waits until the runs hold n events in all.
func waitEvents(t testing.TB, m *Model, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.set.Lock()
		var got int64
		for _, r := range m.set.Runs() {
			got += r.Events
		}
		m.set.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs hold %d events, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func total(tracks []sessions.Track) int64 {
	n := 0
	for _, tr := range tracks {
		n += len(tr.Events)
	}
	return int64(n)
}

// finished opens a replay of twoRuns at its end: the final state.
func finished(t testing.TB, opts common.Options, w, h int) *Model {
	tracks := twoRuns()
	m, _ := replayModel(t, opts, w, h, tracks, sessions.ReplayOptions{Paused: true})
	m.replay.Seek(m.replay.Duration())
	waitEvents(t, m, total(tracks))
	waitDrained(t, m)
	return m
}

// waitDrained waits until the replay's feeder has marked every run fully
// replayed (a last change after the last event) and gone idle.
func waitDrained(t testing.TB, m *Model) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for m.set.Active() {
		if time.Now().After(deadline) {
			t.Fatal("the replay did not reach its end")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGoldenWide(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 200, 50)
	golden.Check(t, "wide_200x50", m.View())
}

func TestGoldenSmall(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 80, 24)
	golden.Check(t, "small_80x24", m.View())
	m.Update(press("tab"))
	golden.Check(t, "small_80x24_tab", m.View())
}

func TestGoldenASCII(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 120, 40)
	out := m.View()
	golden.ASCII(t, out)
	golden.Check(t, "ascii_120x40", out)
}

// TestSizes draws every size from 0×0 to 90×30 (and a few large ones)
// without panicking, never past the size asked for.
func TestSizes(t *testing.T) {
	m := finished(t, common.Options{}, 80, 24)
	sizes := [][2]int{{200, 50}, {300, 80}, {1, 200}, {200, 1}}
	for w := 0; w <= 90; w += 3 {
		for h := 0; h <= 30; h++ {
			sizes = append(sizes, [2]int{w, h})
		}
	}
	for _, sz := range sizes {
		m.SetSize(sz[0], sz[1])
		out := m.View()
		if out == "" {
			continue
		}
		if n := common.Lines(out); n != sz[1] || !golden.Fits(t, "dashboard", out, sz[0], sz[1]) {
			t.Fatalf("%dx%d: %d lines", sz[0], sz[1], n)
		}
	}
}

// TestReplayControls drives a replay with the keys: pause, speed, seek
// forward and back (a restart), and seeking back from the end.
func TestReplayControls(t *testing.T) {
	const sec = int64(time.Second)
	evs := []profile.Event{{T: profile.TypeRunStart, Run: "r", Config: []byte(`{"epochs":10}`)}}
	for i := int64(1); i <= 10; i++ {
		evs = append(evs, profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: int(i), Start: (i - 1) * sec, Dur: sec})
	}
	tracks := []sessions.Track{{Run: "r", Events: evs}}
	m, clock := replayModel(t, common.Options{NoColor: true}, 100, 20, tracks, sessions.ReplayOptions{})
	ctx := t.Context()
	// run_start is due at once; the span ending at 1 s waits for the clock
	waitEvents(t, m, 1)
	if err := clock.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	waitEvents(t, m, 2)

	m.Update(press("p"))
	if !m.replay.Paused() {
		t.Fatal("p did not pause")
	}
	if v := m.View(); !strings.Contains(v, "paused  1x  0:01.0 / 0:10.0") {
		t.Errorf("replay bar while paused:\n%s", firstLine(v))
	}
	clock.Advance(5 * time.Second)
	time.Sleep(20 * time.Millisecond)
	waitEvents(t, m, 2) // nothing more while paused

	m.Update(press("p"))
	m.Update(press("+"))
	if m.replay.Speed() != 2 || m.replay.Paused() {
		t.Fatalf("resume and faster: speed %v paused %v", m.replay.Speed(), m.replay.Paused())
	}
	clock.Advance(time.Second) // 2 s of replay at 2x
	waitEvents(t, m, 4)
	if v := m.View(); !strings.Contains(v, "playing  2x  0:03.0 / 0:10.0") {
		t.Errorf("replay bar while playing:\n%s", firstLine(v))
	}

	m.Update(press("]")) // +10 % of 10 s
	waitEvents(t, m, 5)
	if m.replay.Position() != 4*time.Second {
		t.Errorf("seek forward: position %v", m.replay.Position())
	}

	m.Update(press("[")) // back to 3 s: a restart, rebuilt up to 3 s
	m.Update(press("["))
	waitEvents(t, m, 3)
	m.set.Lock()
	r := m.set.Runs()[0]
	if !r.Started || r.Spans.Len() != 2 || r.Spans.MaxEnd() != 2*sec {
		t.Errorf("after seeking back to 2 s: started %v, %d spans ending at %d", r.Started, r.Spans.Len(), r.Spans.MaxEnd())
	}
	m.set.Unlock()

	m.Update(press("-"))
	m.Update(press("-"))
	if m.replay.Speed() != 0.5 {
		t.Errorf("slower twice from 2x: %v", m.replay.Speed())
	}
	for range 12 {
		m.Update(press("]"))
	}
	waitEvents(t, m, int64(len(evs)))
	if v := m.View(); !strings.Contains(v, "end  0.5x  0:10.0 / 0:10.0") {
		t.Errorf("replay bar at the end:\n%s", firstLine(v))
	}
	// at the end the feeder waits; seeking back wakes it
	m.Update(press("["))
	waitEvents(t, m, 10) // run_start and spans up to 9 s
	if s := m.View(); !strings.Contains(s, "10 events") {
		t.Errorf("after seeking back from the end:\n%s", s)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestTick: the tick goes on while events may come and stops once a
// finished replay is drawn; a control starts it again.
func TestTick(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 100, 30)
	m.Update(press("p")) // resume: at the end, nothing moves
	waitDrained(t, m)    // the poked feeder finds nothing more
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("Init returned no tick")
	}
	// The poked feeder may wake after waitDrained looked: the tick goes on
	// while it is busy, and must stop once it is idle and all is drawn.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		waitDrained(t, m)
		m.View()
		if cmd := m.Update(tickMsg{id: m.id}); cmd == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tick goes on with nothing left to draw")
		}
	}
	if cmd := m.Update(tickMsg{id: m.id + 1000}); cmd != nil {
		t.Error("another dashboard's tick was taken")
	}
	if cmd := m.Update(press("[")); cmd == nil {
		t.Error("seeking back did not restart the tick")
	}
}

// TestZoom: z and Z change every panel's window, stepping from the
// length on display: a run shorter than the default window (10 s) zooms
// in at the first press.
func TestZoom(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 200, 50)
	a := m.View()
	if l := m.panels[0].timeline.WindowLabel(); l != "all" {
		t.Errorf("a 5.4 s run in a 10 s window: %s, want all", l)
	}
	m.Update(press("z"))
	if m.panels[0].timeline.WindowLabel() != "5.000s" || m.panels[1].timeline.WindowLabel() != "2.000s" {
		t.Errorf("zoom in: %s, %s", m.panels[0].timeline.WindowLabel(), m.panels[1].timeline.WindowLabel())
	}
	if m.View() == a {
		t.Error("zooming did not redraw")
	}
	m.Update(press("Z"))
	if m.panels[0].timeline.WindowLabel() != "all" {
		t.Errorf("zoom out: %s", m.panels[0].timeline.WindowLabel())
	}
}

// TestFrameCache: View returns the same frame while nothing changes;
// new events are drawn, but not sooner than minGap after the last frame.
func TestFrameCache(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 120, 40)
	m.minGap = time.Hour
	a := m.View()
	if b := m.View(); b != a {
		t.Fatal("two views of the same state differ")
	}
	m.set.Add(0, &profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: 4, Batch: -1, Value: 0.1})
	if b := m.View(); b != a {
		t.Error("redrawn sooner than minGap")
	}
	m.Update(press("tab"))
	if b := m.View(); b == a {
		t.Error("a key did not redraw at once")
	}
	m.minGap = 0
	m.set.Add(1, &profile.Event{T: profile.TypeMem, Epoch: 4, Batch: 0, Peak: 1 << 40})
	if d := m.View(); !strings.Contains(d, "peak 1.00 TiB") || m.drawn != m.set.Version() {
		t.Error("a new event did not redraw")
	}
}

// TestReplayShowsSkippedGap: a span dated a year after the one before it
// is not waited for (sessions.DefaultMaxWait caps every wait); the replay
// bar says how much time was skipped.
func TestReplayShowsSkippedGap(t *testing.T) {
	const year = 365 * 24 * time.Hour
	evs := []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "late"},
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Start: 0, Dur: int64(time.Second)},
		{T: profile.TypeSpan, Name: profile.StageEval, Lane: profile.LaneCompute, Epoch: 1, Start: int64(year), Dur: int64(time.Second)},
	}
	m, clock := replayModel(t, common.Options{NoColor: true}, 120, 30, []sessions.Track{{Run: "late", Events: evs}}, sessions.ReplayOptions{})
	clock.SetAutoAdvance(true)
	waitEvents(t, m, int64(len(evs)))
	waitDrained(t, m)
	if bar := firstLine(m.View()); !strings.Contains(bar, "gaps skipped 8759h") {
		t.Errorf("replay bar: %s", bar)
	}
}
