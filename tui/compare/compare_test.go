package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

type harness struct {
	t    *testing.T
	st   *sessions.Store
	c    *common.Common
	m    *Model
	msgs []tea.Msg
}

func newHarness(t *testing.T, st *sessions.Store, w, h int, refs ...string) *harness {
	t.Helper()
	hs := &harness{t: t, st: st, c: fixture.Common(st, w, h)}
	m, err := New(hs.c, refs)
	if err != nil {
		t.Fatal(err)
	}
	hs.m = m
	hs.m.SetSize(w, h)
	hs.run(hs.m.Init())
	if hs.m.Comparison() == nil {
		t.Fatalf("no comparison: %s", hs.m.err)
	}
	return hs
}

func (hs *harness) run(cmd tea.Cmd) { fixture.Drive(&hs.m, &hs.msgs, fixture.Step[*Model], cmd) }

func (hs *harness) press(names ...string) {
	fixture.Press(&hs.m, &hs.msgs, fixture.Step[*Model], names...)
}

func TestGoldenCompare(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 22, "20260102-030400-aaaa")
	fixture.Golden(t, "compare_80x22", hs.m.View())
	// the notes wrap at 80 columns: none is cut at the right edge
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "interval over 3+ repeats, none from fewer") {
		t.Errorf("the speedup note is cut:\n%s", v)
	}
	if got := hs.m.Title(); got != "Compare 2 runs of 20260102-030400-aaaa" {
		t.Errorf("title %q", got)
	}
	c := hs.m.Comparison()
	if c.Baseline != "baseline" || len(c.Runs) != 2 || c.Runs[1].Speedup < 1.999 || c.Runs[1].Speedup > 2.001 {
		t.Errorf("comparison: baseline %q, runs %d, speedup %v", c.Baseline, len(c.Runs), c.Runs[1].Speedup)
	}
}

func TestGoldenCompareSessionsScrolled(t *testing.T) {
	// runs of three sessions: the failed one's error is a note; narrow
	// enough that the columns scroll
	hs := newHarness(t, fixture.Standard(t), 60, 14, "20260102-030400-aaaa/optimized", "20260102-040500-bbbb", "20260102-050600-cccc")
	fixture.Golden(t, "compare_sessions_60x14", hs.m.View())
	hs.press("right", "G")
	fixture.Golden(t, "compare_sessions_scrolled", hs.m.View())
	v := ansi.Strip(hs.m.View())
	if !strings.Contains(v, "speedup") || strings.Contains(v, "epoch mean s") {
		t.Errorf("G did not scroll to the last rows:\n%s", v)
	}
	hs.press("g", "left", "left")
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "epochs") {
		t.Errorf("g did not scroll back:\n%s", v)
	}
}

func TestLiveRefresh(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 100, 30, "20260102-050600-cccc")
	if !hs.m.live() {
		t.Fatal("a running run is not live")
	}
	// the run ends; the refresh tick recomputes
	s, _ := st.Get("20260102-050600-cccc")
	f, err := os.OpenFile(s.JournalPath("optimized"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"run_end","status":"ok"}` + "\n")
	f.Close()
	hs.run(func() tea.Msg { return refreshMsg{hs.m.id} })
	if hs.m.live() {
		t.Error("still live after run_end")
	}
	if got := hs.m.Comparison().Runs[1].Status; got != "ok" {
		t.Errorf("status after refresh %q", got)
	}
	// a refresh of an older screen is ignored
	hs.run(func() tea.Msg { return refreshMsg{hs.m.id + 100} })
	if hs.m.busy {
		t.Error("a foreign refresh started a computation")
	}
}

func TestExport(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 100, 40, "20260102-030400-aaaa")
	hs.press("x")
	if !hs.m.Capturing() {
		t.Fatal("x opened no dialog")
	}
	fixture.Golden(t, "compare_export", hs.m.View())
	out := t.TempDir()
	hs.press("tab", "tab", "tab", "tab", "tab") // to the folder, past the (unchecked) archive box
	for range 60 {
		hs.press("backspace")
	}
	hs.press(out, "enter")
	if hs.m.Capturing() {
		t.Fatalf("dialog still open:\n%s", hs.m.View())
	}
	// each file's name starts with the id of the compared runs' session
	// (the first one's, "-and-N-more" for several)
	path := map[string]string{}
	for _, name := range []string{"compare.md", "compare.csv", "compare.tex", "trace.json"} {
		m, _ := filepath.Glob(filepath.Join(out, "2026*-"+name))
		if len(m) != 1 {
			t.Errorf("%s: found %q", name, m)
			continue
		}
		path[name] = m[0]
	}
	var st0 []common.StatusMsg
	for _, m := range hs.msgs {
		if s, ok := m.(common.StatusMsg); ok {
			st0 = append(st0, s)
		}
	}
	if len(st0) != 1 || !strings.Contains(st0[0].Text, "in "+out) {
		t.Errorf("status %+v", st0)
	}
	tex, _ := os.ReadFile(path["compare.tex"])
	if !strings.Contains(string(tex), `\begin{tabular}`) {
		t.Errorf("compare.tex:\n%s", tex)
	}
	trace, _ := os.ReadFile(path["trace.json"])
	if !strings.Contains(string(trace), `"traceEvents"`) || !strings.Contains(string(trace), "optimized") {
		t.Errorf("trace.json lacks events or runs: %.200s", trace)
	}
}

func TestErrorsAndSizes(t *testing.T) {
	st := fixture.Standard(t)
	c := fixture.Common(st, 80, 24)
	if _, err := New(c, nil); err == nil {
		t.Error("no refs: no error")
	}
	if _, err := New(c, []string{"nosuch"}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown session: %v", err)
	}
	hs := newHarness(t, st, 80, 24, "20260102-030400-aaaa")
	for _, sz := range [][2]int{{10, 5}, {0, 0}, {1, 1}, {25, 4}} {
		hs.m.SetSize(sz[0], sz[1])
		hs.press("right", "down", "x")
		v := hs.m.View()
		if common.Lines(v) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], common.Lines(v))
		}
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > sz[0] {
				t.Errorf("%dx%d: line %q", sz[0], sz[1], l)
			}
		}
		hs.press("esc")
	}
	hs.press("enter")
	found := false
	for _, m := range hs.msgs {
		if d, ok := m.(common.OpenDashboardMsg); ok && d.Session == "20260102-030400-aaaa" {
			found = true
		}
	}
	if !found {
		t.Error("enter opened no dashboard")
	}
}
