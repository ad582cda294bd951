package sessionlist

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/exporter"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// harness is a list on a fixture store, driven like a program does.
type harness struct {
	t        *testing.T
	store    *sessions.Store
	c        *common.Common
	m        *Model
	msgs     []tea.Msg // every message fed so far
	launched []runner.Experiment
}

func newHarness(t *testing.T, st *sessions.Store, w, h int) *harness {
	t.Helper()
	time.Local = time.UTC
	hs := &harness{t: t, store: st}
	hs.c = fixture.Common(st, w, h)
	hs.m = New(hs.c)
	hs.m.Launch = fixture.Launcher(&hs.launched)
	hs.m.SetSize(w, h)
	hs.run(hs.m.Init())
	if !hs.m.loaded {
		t.Fatal("the list did not load")
	}
	t.Cleanup(func() { hs.m.Close() })
	return hs
}

func (hs *harness) run(cmd tea.Cmd) { fixture.Drive(&hs.m, &hs.msgs, fixture.Step[*Model], cmd) }

// press sends keys one by one, running what each one starts.
func (hs *harness) press(names ...string) {
	fixture.Press(&hs.m, &hs.msgs, fixture.Step[*Model], names...)
}

// sent returns the messages of type T the list sent (for the root).
func sent[T any](hs *harness) []T {
	var out []T
	for _, m := range hs.msgs {
		if v, ok := m.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func (hs *harness) cursorID() string {
	e, _ := hs.m.current()
	if e == nil {
		return ""
	}
	return e.ID
}

func TestGoldenList(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 22)
	fixture.Golden(t, "list_80x22", hs.m.View())

	hs.press("down", "down", "right")
	fixture.Golden(t, "list_expanded", hs.m.View())

	hs.press("space", "down", "space")
	fixture.Golden(t, "list_selected", hs.m.View())
}

func TestGoldenListWide(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 132, 12)
	fixture.Golden(t, "list_132x12", hs.m.View())
}

func TestGoldenListASCIINarrow(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 44, 9)
	hs.c.Opts.ASCII = true
	hs.c.Styles = common.NewStyles(hs.c.Opts)
	hs.press("right")
	fixture.Golden(t, "list_ascii_44x9", hs.m.View())
	golden.ASCII(t, hs.m.View())
}

func TestGoldenListEmpty(t *testing.T) {
	hs := newHarness(t, fixture.Store(t), 80, 10)
	fixture.Golden(t, "list_empty", hs.m.View())
}

func TestFigures(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	ids := []string{}
	for _, e := range hs.m.Entries() {
		ids = append(ids, e.ID)
	}
	want := []string{"20260102-050600-cccc", "20260102-040500-bbbb", "20260102-030400-aaaa"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want newest first %v", ids, want)
	}
	done := hs.m.Entries()[2]
	if done.Status != "ok" || done.Data != "synth-tiny" || done.Model != "sage" {
		t.Errorf("finished session: status %q data %q model %q", done.Status, done.Data, done.Model)
	}
	// baseline epochs: 2 batches of 10+5+10 ms, then 10 ms of eval: 60 ms;
	// optimized: 2×(5+2+6)+4 = 30 ms
	if !near(done.BaseEpochS, 0.060) || !near(done.BestEpochS, 0.030) || !near(done.Speedup.Ratio, 2) || done.Best != "optimized" {
		t.Errorf("figures: base %.4f best %.4f (%s) speedup %.3f, want 0.060, 0.030 (optimized), 2", done.BaseEpochS, done.BestEpochS, done.Best, done.Speedup.Ratio)
	}
	if done.BaseAcc == nil || *done.BaseAcc != 0.8125 {
		t.Errorf("baseline accuracy %v, want 0.8125", done.BaseAcc)
	}
	if s := hs.m.Entries()[1]; s.Status != "oom" || !strings.Contains(s.Runs[0].Error, "out of memory") {
		t.Errorf("failed session: status %q, runs %+v", s.Status, s.Runs)
	}
	if s := hs.m.Entries()[0]; !s.Running() {
		t.Errorf("running session reads %q", s.Status)
	}
	if !hs.m.Live() {
		t.Error("Live() is false with a running session")
	}
}

func near(a, b float64) bool { return a > b-1e-9 && a < b+1e-9 }

func TestNavigation(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	if got := hs.cursorID(); got != "20260102-050600-cccc" {
		t.Fatalf("cursor starts on %s, want the newest", got)
	}
	hs.press("down")
	if got := hs.cursorID(); got != "20260102-040500-bbbb" {
		t.Errorf("down: cursor on %s", got)
	}
	hs.press("j", "j", "j") // past the end: stays on the last
	if got := hs.cursorID(); got != "20260102-030400-aaaa" {
		t.Errorf("j j j: cursor on %s", got)
	}
	hs.press("g")
	if got := hs.cursorID(); got != "20260102-050600-cccc" {
		t.Errorf("g: cursor on %s", got)
	}
	hs.press("G", "right", "down")
	if _, r := hs.m.current(); r.run != 0 {
		t.Errorf("right then down: on row %+v, want the first run", r)
	}
	hs.press("left")
	if _, r := hs.m.current(); r.run != -1 || hs.cursorID() != "20260102-030400-aaaa" {
		t.Errorf("left: on %s row %+v, want the session row", hs.cursorID(), r)
	}

	hs.press("enter")
	if d := sent[common.OpenDashboardMsg](hs); len(d) != 1 || d[0].Session != "20260102-030400-aaaa" || d[0].Replay {
		t.Errorf("enter sent %+v", d)
	}
	hs.press("r")
	if d := sent[common.OpenDashboardMsg](hs); len(d) != 2 || !d[1].Replay {
		t.Errorf("r sent %+v", d)
	}
	hs.press("n")
	if n := sent[common.OpenNewMsg](hs); len(n) != 1 {
		t.Errorf("n sent %d OpenNewMsg", len(n))
	}
}

func TestCompareSelection(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	hs.press("c")
	if c := sent[common.OpenCompareMsg](hs); len(c) != 1 || !slices.Equal(c[0].Refs, []string{"20260102-050600-cccc"}) {
		t.Fatalf("c without a selection sent %+v", c)
	}
	// select the oldest session and the first run of the running one
	hs.press("G", "space", "g", "right", "down", "space")
	want := []string{"20260102-050600-cccc/baseline", "20260102-030400-aaaa"}
	if got := hs.m.Selected(); !slices.Equal(got, want) {
		t.Fatalf("selected %v, want %v", got, want)
	}
	hs.press("c")
	if c := sent[common.OpenCompareMsg](hs); len(c) != 2 || !slices.Equal(c[1].Refs, want) {
		t.Errorf("c with a selection sent %+v", c)
	}
	hs.press("up", "space") // the cursor went down after space: back on the run, unselect it
	if got := hs.m.Selected(); !slices.Equal(got, want[1:]) {
		t.Errorf("space on a selected run: selected %v, want %v", got, want[1:])
	}
	hs.press("up", "up", "space")
	if got := hs.m.Selected(); !slices.Equal(got, []string{"20260102-050600-cccc", "20260102-030400-aaaa"}) {
		t.Errorf("space on the session row: selected %v", got)
	}
}

func TestDeleteConfirmation(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 80, 24)
	hs.press("G", "D")
	if !hs.m.Capturing() || !strings.Contains(hs.m.View(), "Delete session 20260102-030400-aaaa") {
		t.Fatalf("D did not ask:\n%s", hs.m.View())
	}
	fixture.Golden(t, "list_confirm_delete", hs.m.View())
	hs.press("q") // neither y nor n: still asking
	if !hs.m.Capturing() {
		t.Fatal("q answered the question")
	}
	hs.press("n")
	if hs.m.Capturing() || len(hs.m.Entries()) != 3 {
		t.Fatalf("n: capturing %v, %d sessions", hs.m.Capturing(), len(hs.m.Entries()))
	}
	if _, err := st.Get("20260102-030400-aaaa"); err != nil {
		t.Fatalf("n deleted the session: %v", err)
	}
	hs.press("D", "y")
	if _, err := st.Get("20260102-030400-aaaa"); err == nil {
		t.Fatal("y did not delete the session")
	}
	if n := len(hs.m.Entries()); n != 2 {
		t.Errorf("%d sessions listed after the delete, want 2", n)
	}
	if s := sent[common.StatusMsg](hs); len(s) == 0 || !strings.Contains(s[len(s)-1].Text, "deleted session 20260102-030400-aaaa") {
		t.Errorf("status after delete: %+v", s)
	}

	// a running session is not deleted: cancel first
	hs.press("g", "D")
	if hs.m.Capturing() {
		t.Error("D on a running session asked instead of refusing")
	}
	if s := sent[common.StatusMsg](hs); !s[len(s)-1].Err || !strings.Contains(s[len(s)-1].Text, "cancel it first") {
		t.Errorf("D on a running session: %+v", s[len(s)-1])
	}
	// K on a finished one is refused, on the running one it asks
	hs.press("down", "K")
	if hs.m.Capturing() {
		t.Error("K on a finished session asked")
	}
	hs.press("g", "K")
	if !hs.m.Capturing() || !strings.Contains(hs.m.View(), "Cancel session 20260102-050600-cccc?") {
		t.Errorf("K on the running session did not ask:\n%s", hs.m.View())
	}
	hs.press("esc")
	if hs.m.Capturing() {
		t.Error("esc did not close the question")
	}
}

func TestLaunchDefault(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	hs.press("L")
	if len(hs.launched) != 1 {
		t.Fatalf("L launched %d experiments", len(hs.launched))
	}
	exp := hs.launched[0]
	if exp.Data != "synth-tiny" || exp.Train.Model != "sage" || exp.Train.Epochs != launch.DefaultEpochs || exp.Repeats != 3 {
		t.Errorf("L launched %s %s for %d epochs, %d repeats (want 3: an interval over runs)", exp.Data, exp.Train.Model, exp.Train.Epochs, exp.Repeats)
	}
	// the fixture's launcher fails: the root gets the error
	if l := sent[common.LaunchedMsg](hs); len(l) != 1 || l[0].Err == nil {
		t.Errorf("launched messages %+v", l)
	}
}

func TestExportDialog(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 80, 24)
	hs.press("G", "x")
	if !hs.m.Capturing() {
		t.Fatal("x did not open the export dialog")
	}
	fixture.Golden(t, "list_export", hs.m.View())
	// uncheck the archive (last checkbox): four files into the folder
	hs.press("up", "up", "up", "space", "enter")
	if hs.m.Capturing() {
		t.Fatalf("the dialog is still open:\n%s", hs.m.View())
	}
	dir := filepath.Join("home", "sessions", "20260102-030400-aaaa")
	const id = "20260102-030400-aaaa-"
	for _, name := range []string{id + "compare.md", id + "compare.csv", id + "compare.tex", id + "trace.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat("20260102-030400-aaaa.tar.gz"); err == nil {
		t.Error("the unchecked archive was written")
	}
	s := sent[common.StatusMsg](hs)
	if len(s) == 0 || s[len(s)-1].Err || !strings.Contains(s[len(s)-1].Text, id+"compare.md, "+id+"compare.csv, "+id+"compare.tex, "+id+"trace.json in "+dir) {
		t.Errorf("status after export: %+v", s)
	}
	md, _ := os.ReadFile(filepath.Join(dir, id+"compare.md"))
	if !strings.Contains(string(md), "optimized") || !strings.Contains(string(md), "2.000") {
		t.Errorf("compare.md lacks the runs or the speedup:\n%s", md)
	}

	// the archive, with the comparison files again: the dialog asks before
	// overwriting them, and a second enter does
	hs.press("x", "up", "space", "down", "down", "down", "down", "space", "enter")
	if v := ansi.Strip(hs.m.View()); !hs.m.Capturing() || !strings.Contains(v, "already") || !strings.Contains(v, "enter overwrites, esc cancels") {
		t.Fatalf("no question before overwriting:\n%s", v)
	}
	hs.press("enter")
	if _, err := os.Stat("20260102-030400-aaaa.tar.gz"); err != nil {
		t.Errorf("archive: %v (status %+v)", err, sent[common.StatusMsg](hs))
	}
}

func TestExportErrors(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	hs.press("G", "x", "tab", "tab", "tab", "tab", "tab")
	if f := hs.m.export.Dialog().Request(); f.Dir == "" {
		t.Fatal("no default folder")
	}
	// a folder that cannot be made (below a file): the dialog stays open
	// with the error
	if err := os.WriteFile("a-file", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 60 {
		hs.press("backspace")
	}
	hs.press("a-file/sub", "up", "space", "enter") // the archive unchecked: only files for the folder
	if !hs.m.Capturing() || !strings.Contains(ansi.Strip(hs.m.View()), "a-file/sub") {
		t.Errorf("the dialog closed or shows no error:\n%s", hs.m.View())
	}
	hs.press("esc")
	if hs.m.Capturing() {
		t.Error("esc did not close the dialog")
	}
	if d := sent[exporter.DoneMsg](hs); len(d) != 1 || d[0].Err == nil {
		t.Errorf("done messages %+v", d)
	}
}

func TestLivePoll(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 80, 24)
	run := hs.m.Entries()[0]
	if !run.Running() {
		t.Fatal("fixture session is not running")
	}
	// a poll reads the tails: progress 1/5
	hs.run(func() tea.Msg { return tickMsg{} })
	e := hs.m.Entries()[0]
	var opt *Run
	for i := range e.Runs {
		if e.Runs[i].Name == "optimized" {
			opt = &e.Runs[i]
		}
	}
	if opt == nil || opt.Status != "running" || opt.Epoch != 1 || opt.Epochs != 5 {
		t.Fatalf("running run after a poll: %+v", opt)
	}
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "running 1/5") || !strings.Contains(v, "running 20%") {
		t.Errorf("the list does not show the progress:\n%s", hs.m.View())
	}
	// the run ends: the next poll describes the session anew
	s, _ := st.Get(run.ID)
	f, err := os.OpenFile(s.JournalPath("optimized"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"run_end","status":"ok","summary":{"test_acc":0.8125}}` + "\n")
	f.Close()
	// and a new session appears meanwhile
	fixture.Add(t, st, fixture.Session{ID: "20260102-060000-dddd", Variants: []string{"baseline"}, Runs: []fixture.Run{fixture.Baseline}})
	hs.run(func() tea.Msg { return tickMsg{} })
	if got := hs.m.Entries()[1]; got.ID != run.ID || got.Status != "ok" {
		t.Errorf("after run_end: %s %s", got.ID, got.Status)
	}
	if got := hs.m.Entries()[0].ID; got != "20260102-060000-dddd" {
		t.Errorf("new session not listed first: %s", got)
	}
	if hs.m.Live() {
		t.Error("still live after every run ended")
	}
	hs.m.poller.mu.Lock()
	defer hs.m.poller.mu.Unlock()
	if n := len(hs.m.poller.runs); n != 0 {
		t.Errorf("%d tails left open", n)
	}
}

func TestTinySizes(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24)
	for _, sz := range [][2]int{{10, 5}, {1, 1}, {0, 0}, {3, 2}, {20, 3}} {
		hs.m.SetSize(sz[0], sz[1])
		golden.Fits(t, "list", hs.m.View(), sz[0], sz[1])
		hs.press("x", "esc", "D", "n", "down")
	}
}

func TestProgressiveLoad(t *testing.T) {
	st := fixture.Standard(t)
	c := fixture.Common(st, 80, 12)
	m := New(c)
	m.SetSize(80, 12)
	defer m.Close()
	// what the first, cheap pass gives: states, no figures
	entries, err := glanceAll(st)
	if err != nil {
		t.Fatal(err)
	}
	cmd := m.Update(loadedMsg{entries: entries})
	for _, e := range m.Entries() {
		if !e.Partial || e.Speedup.Ratio != 0 {
			t.Errorf("%s after the glance: partial %v speedup %v", e.ID, e.Partial, e.Speedup)
		}
	}
	if got := m.Entries()[1].Status; got != "oom" {
		t.Errorf("the glance reads statuses: %q", got)
	}
	fixture.Golden(t, "list_partial", m.View())
	// the describe chain fills in the figures, newest first
	var msgs []tea.Msg
	fixture.Drive(&m, &msgs, fixture.Step[*Model], cmd)
	for _, e := range m.Entries() {
		if e.Partial {
			t.Errorf("%s still partial", e.ID)
		}
	}
	if got := m.Entries()[2].Speedup.Ratio; !near(got, 2) {
		t.Errorf("speedup after the describe: %v", got)
	}
	// figures of an older load are dropped
	m.Update(describedMsg{load: m.loads - 1, entry: Entry{ID: m.Entries()[0].ID, Status: "bogus"}})
	if m.Entries()[0].Status == "bogus" {
		t.Error("a describe of an older load replaced an entry")
	}
}

// TestTicksOnlyWhileLive checks that the list schedules timers only while
// a session runs, one at a time, at the poll interval.
func TestTicksOnlyWhileLive(t *testing.T) {
	st := fixture.Store(t)
	fixture.Add(t, st, fixture.Session{ID: "20260102-030400-aaaa", Variants: []string{"baseline", "optimized"},
		Runs: []fixture.Run{fixture.Baseline, fixture.Optimized}})
	c := fixture.Common(st, 80, 24)
	var ticks []time.Duration
	c.Tick = func(d time.Duration, _ func(time.Time) tea.Msg) tea.Cmd {
		ticks = append(ticks, d)
		return nil
	}
	m := New(c)
	m.SetSize(80, 24)
	defer m.Close()
	var msgs []tea.Msg
	drive := func(cmd tea.Cmd) { fixture.Drive(&m, &msgs, fixture.Step[*Model], cmd) }
	drive(m.Init())
	drive(m.Focus())
	if len(ticks) != 0 {
		t.Fatalf("an idle list scheduled %d timers", len(ticks))
	}
	running := fixture.Optimized
	running.Status = ""
	fixture.Add(t, st, fixture.Session{ID: "20260102-040000-bbbb", Variants: []string{"optimized"}, Runs: []fixture.Run{running}})
	drive(m.Poll())
	drive(m.Poll()) // a second poll while the tick is pending schedules no second tick
	if len(ticks) != 1 || ticks[0] != PollInterval {
		t.Fatalf("timers while a session runs: %v, want one of %v", ticks, PollInterval)
	}
	drive(func() tea.Msg { return tickMsg{} })
	if len(ticks) != 2 {
		t.Fatalf("after the tick's poll: %d timers, want the next one", len(ticks))
	}
}

// TestGoldenList160 is the repro of names cut at 160 columns: a session
// of five variants shows its variant list whole where there is room.
func TestGoldenList160(t *testing.T) {
	st := fixture.Standard(t)
	fixture.Add(t, st, fixture.Session{ID: "20260103-010101-wide", Created: time.Date(2026, 1, 3, 1, 1, 1, 0, time.UTC), Variants: []string{"baseline", "optimized", "mem-guard", "pipelined", "overlap-eval"},
		Runs: []fixture.Run{fixture.Baseline}})
	hs := newHarness(t, st, 160, 12)
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "baseline,optimized,mem-guard,pipelined,overlap-eval") {
		t.Errorf("the variants are cut at 160 columns:\n%s", v)
	}
	fixture.Golden(t, "list_160x12", hs.m.View())
	golden.Fits(t, "list", hs.m.View(), 160, 12)
}
