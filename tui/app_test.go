package tui

import (
	"charm.land/bubbles/v2/key"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/compare"
	"github.com/gnnscope/gnnscope/tui/dashboard"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/launch"
	"github.com/gnnscope/gnnscope/tui/newexp"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

type harness struct {
	t        *testing.T
	c        *common.Common
	m        *Model
	msgs     []tea.Msg
	launched []runner.Experiment
}

func newHarness(t *testing.T, st *sessions.Store, w, h int, opts common.Options) *harness {
	t.Helper()
	time.Local = time.UTC
	hs := &harness{t: t}
	hs.c = fixture.Common(st, w, h)
	opts.NoColor = true
	hs.c.Opts = opts
	hs.c.Styles = common.NewStyles(opts)
	hs.m = New(hs.c, fixture.Launcher(&hs.launched))
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	t.Cleanup(hs.m.Close)
	return hs
}

// update is the root's Update for fixture.Drive: the root stays itself.
func update(m *Model, msg tea.Msg) (*Model, tea.Cmd) {
	_, cmd := m.Update(msg)
	return m, cmd
}

func (hs *harness) run(cmd tea.Cmd) { fixture.Drive(&hs.m, &hs.msgs, update, cmd) }

func (hs *harness) send(msg tea.Msg) {
	_, cmd := hs.m.Update(msg)
	hs.run(cmd)
}

func (hs *harness) press(names ...string) { fixture.Press(&hs.m, &hs.msgs, update, names...) }

func (hs *harness) view() string { return hs.m.View().Content }

func (hs *harness) quit() bool {
	for _, m := range hs.msgs {
		if _, ok := m.(tea.QuitMsg); ok {
			return true
		}
	}
	return false
}

// on reports whether the screen on display is a T.
func on[T common.Screen](m *Model) bool {
	_, ok := m.Screen().(T)
	return ok
}

func TestGoldenHelp(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	hs.press("?")
	if !hs.m.HelpOpen() {
		t.Fatal("? did not open the help")
	}
	fixture.Golden(t, "help_80x24", hs.view())
	// every binding of the keymap is listed, on the first page or those
	// the help scrolls to
	v := ansi.Strip(hs.view())
	for range 6 {
		hs.press("pgdown")
		v += ansi.Strip(hs.view())
	}
	for range 6 {
		hs.press("pgup")
	}
	for _, sec := range hs.c.Keys.All() {
		for _, b := range sec.Bindings {
			if !strings.Contains(v, b.Help().Desc) {
				t.Errorf("help lacks %q (%s)", b.Help().Desc, b.Help().Key)
			}
		}
	}
	hs.press("?")
	if hs.m.HelpOpen() {
		t.Error("? did not close the help")
	}
	hs.press("?", "esc")
	if hs.m.HelpOpen() || !on[*sessionlist.Model](hs.m) {
		t.Error("esc did not close the help only")
	}
}

// On a wide screen the help shows every section at once, the timeline's
// fold keys among them.
func TestGoldenHelpWide(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 160, 48, common.Options{})
	hs.press("?")
	fixture.Golden(t, "help_160x48", hs.view())
	v := ansi.Strip(hs.view())
	for _, b := range []key.Binding{hs.c.Keys.Fold, hs.c.Keys.FoldNode} {
		if !strings.Contains(v, b.Help().Desc) {
			t.Errorf("help lacks %q", b.Help().Desc)
		}
	}
}

func TestGoldenHelpASCIINarrow(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 50, 16, common.Options{ASCII: true})
	hs.press("?")
	fixture.Golden(t, "help_ascii_50x16", hs.view())
	hs.press("down", "down", "down", "down", "down")
	fixture.Golden(t, "help_ascii_50x16_scrolled", hs.view())
	golden.ASCII(t, hs.view())
}

func TestGoldenRoot(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	fixture.Golden(t, "root_80x24", hs.view())
	if v := hs.m.View(); !v.AltScreen {
		t.Error("the view does not ask for the alternate screen")
	}
}

func TestNavigation(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 100, 30, common.Options{})
	hs.press("n")
	if !on[*newexp.Model](hs.m) {
		t.Fatalf("n: screen %q", hs.m.Screen().Title())
	}
	// q types into the form's name field instead of quitting
	hs.press("q", "?")
	if hs.quit() || hs.m.HelpOpen() {
		t.Fatal("q or ? acted on the form")
	}
	hs.press("esc")
	if !on[*sessionlist.Model](hs.m) {
		t.Fatalf("esc from the form: screen %q", hs.m.Screen().Title())
	}
	// compare the oldest session, back
	hs.press("G", "c")
	if !on[*compare.Model](hs.m) {
		t.Fatalf("c: screen %q (status %q)", hs.m.Screen().Title(), hs.m.Status().Text)
	}
	if v := ansi.Strip(hs.view()); !strings.Contains(v, "Compare 2 runs of 20260102-030400-aaaa") || !strings.Contains(v, "speedup") {
		t.Errorf("compare screen:\n%s", v)
	}
	// enter on the compare screen opens the dashboard; esc goes back to
	// compare, then to the list
	hs.press("enter")
	if !on[*dashboard.Model](hs.m) {
		t.Fatalf("enter on compare: screen %q (status %q)", hs.m.Screen().Title(), hs.m.Status().Text)
	}
	if v := ansi.Strip(hs.view()); !strings.Contains(v, "gnnscope › Run 20260102-030400-aaaa") || strings.Count(v, "Run 20260102-030400-aaaa") != 1 {
		t.Errorf("dashboard header (the title once):\n%s", hs.view())
	}
	// c on the dashboard compares its session: a second compare screen
	hs.press("c")
	if !on[*compare.Model](hs.m) || !strings.Contains(hs.m.Screen().Title(), "20260102-030400-aaaa") {
		t.Errorf("c on the dashboard: screen %q", hs.m.Screen().Title())
	}
	hs.press("esc")
	if !on[*dashboard.Model](hs.m) {
		t.Errorf("esc from the second compare: screen %q", hs.m.Screen().Title())
	}
	hs.press("esc")
	if !on[*compare.Model](hs.m) || !strings.Contains(ansi.Strip(hs.view()), "speedup") {
		t.Errorf("esc from the dashboard: screen %q\n%s", hs.m.Screen().Title(), hs.view())
	}
	hs.press("backspace")
	if !on[*sessionlist.Model](hs.m) {
		t.Errorf("backspace from compare: screen %q", hs.m.Screen().Title())
	}
	if hs.m.Depth() != 1 {
		t.Errorf("%d screens in the back stack on the list", hs.m.Depth())
	}
	// r: a replay dashboard
	hs.press("r")
	if !on[*dashboard.Model](hs.m) || !strings.Contains(hs.m.Screen().Title(), "replay") {
		t.Errorf("r: screen %q", hs.m.Screen().Title())
	}
	hs.press("esc")
	// a session that cannot be opened: an error in the status bar
	hs.send(common.OpenDashboardMsg{Session: "nosuch"})
	if !on[*sessionlist.Model](hs.m) || !hs.m.Status().Err || !strings.Contains(hs.m.Status().Text, "nosuch") {
		t.Errorf("bad dashboard: screen %q status %+v", hs.m.Screen().Title(), hs.m.Status())
	}
	if !strings.Contains(ansi.Strip(hs.view()), "nosuch") {
		t.Error("the status bar does not show the error")
	}
	hs.press("q")
	if !hs.quit() {
		t.Error("q did not quit")
	}
	if v := hs.view(); v != "" {
		t.Errorf("view after quit: %q", v)
	}
}

func TestLaunchOpensDashboard(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 100, 30, common.Options{})
	// a launcher that makes a finished session, as if the runs were quick
	ids := []string{"20260102-070000-eeee", "20260102-080000-ffff"}
	hs.m.setLauncher(func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		hs.launched = append(hs.launched, exp)
		return fixture.Add(t, st, fixture.Session{ID: ids[len(hs.launched)-1], Name: exp.Name,
			Variants: []string{"baseline", "optimized"}, Runs: []fixture.Run{fixture.Baseline, fixture.Optimized}}), nil
	})
	hs.press("L")
	if len(hs.launched) != 1 || hs.launched[0].Data != launch.DefaultData {
		t.Fatalf("L launched %+v", hs.launched)
	}
	if !on[*dashboard.Model](hs.m) || !strings.Contains(hs.m.Screen().Title(), "20260102-070000-eeee") {
		t.Fatalf("after L: screen %q status %+v", hs.m.Screen().Title(), hs.m.Status())
	}
	if !strings.Contains(hs.m.Status().Text, "launched session 20260102-070000-eeee") {
		t.Errorf("status %+v", hs.m.Status())
	}
	hs.press("esc")
	if e, _ := hs.m.list.Entries(), 0; len(e) != 4 || e[0].ID != "20260102-070000-eeee" {
		t.Errorf("the list does not show the launched session first: %d entries", len(e))
	}
	// the status clears after its timeout
	hs.send(clearStatusMsg{seq: hs.m.statusSeq})
	if hs.m.Status().Text != "" {
		t.Error("status not cleared")
	}

	// through the form: the form goes, the dashboard comes, back is the list
	hs.press("n", "ctrl+s")
	if !on[*dashboard.Model](hs.m) || hs.m.Depth() != 2 {
		t.Fatalf("after the form's launch: screen %q, %d screens", hs.m.Screen().Title(), hs.m.Depth())
	}
	hs.press("esc")
	if !on[*sessionlist.Model](hs.m) {
		t.Errorf("esc after a launch from the form: screen %q", hs.m.Screen().Title())
	}
}

func TestLaunchFailure(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 100, 30, common.Options{})
	hs.press("L")
	if !on[*sessionlist.Model](hs.m) || !hs.m.Status().Err || !strings.Contains(hs.m.Status().Text, "launching is off") {
		t.Errorf("failed launch: screen %q status %+v", hs.m.Screen().Title(), hs.m.Status())
	}
}

func TestSizes(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	screens := [][]string{{}, {"?"}, {"?", "esc", "n"}, {"esc", "G", "c"}, {"enter"}}
	for _, keys := range screens {
		hs.press(keys...)
		for _, sz := range [][2]int{{10, 5}, {1, 1}, {0, 0}, {2, 3}, {80, 24}, {200, 60}, {30, 8}} {
			hs.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			v := hs.view()
			golden.Fits(t, fmt.Sprintf("after %v", keys), v, sz[0], sz[1])
			if sz[1] >= 3 && common.Lines(v) != sz[1] {
				t.Errorf("after %v at %dx%d: %d lines, want the full height", keys, sz[0], sz[1], common.Lines(v))
			}
		}
		hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	}
	hs.press("esc", "esc", "esc")
	fixture.Golden(t, "root_10x5", func() string {
		hs.send(tea.WindowSizeMsg{Width: 10, Height: 5})
		return hs.view()
	}())
}

func TestCtrlCQuitsFromTheForm(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	hs.press("n", "ctrl+c")
	if !hs.quit() {
		t.Error("ctrl+c did not quit from the form")
	}
}

// TestOpenFirst: the workbench started on a session (gnnscope ui SESSION)
// shows its dashboard at once, with the sessions list one step back.
func TestOpenFirst(t *testing.T) {
	for _, replay := range []bool{false, true} {
		st := fixture.Standard(t)
		time.Local = time.UTC
		c := fixture.Common(st, 100, 30)
		c.Opts = common.Options{NoColor: true}
		c.Styles = common.NewStyles(c.Opts)
		var launched []runner.Experiment
		hs := &harness{t: t, c: c, m: New(c, fixture.Launcher(&launched))}
		hs.m.OpenFirst(common.OpenDashboardMsg{Session: "20260102-030400-aaaa", Replay: replay})
		hs.send(tea.WindowSizeMsg{Width: 100, Height: 30})
		hs.run(hs.m.Init())
		t.Cleanup(hs.m.Close)
		if !on[*dashboard.Model](hs.m) || hs.m.Depth() != 2 {
			t.Fatalf("replay %v: screen %q, depth %d (status %q)", replay, hs.m.Screen().Title(), hs.m.Depth(), hs.m.Status().Text)
		}
		// the session has ended: its dashboard is a replay either way
		if !strings.Contains(hs.m.Screen().Title(), "replay") || !strings.Contains(hs.m.Screen().Title(), "20260102-030400-aaaa") {
			t.Errorf("replay %v: title %q", replay, hs.m.Screen().Title())
		}
		hs.press("esc")
		if !on[*sessionlist.Model](hs.m) {
			t.Errorf("esc: screen %q", hs.m.Screen().Title())
		}
	}
}

// TestEditCopy: e on a session opens the new-experiment form filled with
// its experiment and variants; the status bar says whose copy it is.
func TestEditCopy(t *testing.T) {
	st := fixture.Standard(t)
	fixture.Add(t, st, fixture.Session{ID: "20260104-010101-eeee", Name: "mine", Model: "gcn", Variants: []string{"baseline", "mem-guard"}})
	hs := newHarness(t, st, 120, 40, common.Options{})
	hs.press("g", "e") // the newest session
	if !on[*newexp.Model](hs.m) {
		t.Fatalf("e: screen %q (status %q)", hs.m.Screen().Title(), hs.m.Status().Text)
	}
	form := hs.m.Screen().(*newexp.Model)
	exp, variants, _ := form.Experiment()
	if exp.Name != "mine" || exp.Data != "synth-tiny" || exp.Train.Model != "gcn" || exp.Train.Epochs != 2 {
		t.Errorf("form experiment %+v", exp)
	}
	var names []string
	for _, v := range variants {
		names = append(names, v.Name)
	}
	if strings.Join(names, ",") != "baseline,mem-guard" {
		t.Errorf("variants %v", names)
	}
	if !strings.Contains(hs.m.Status().Text, "a copy of 20260104-010101-eeee") {
		t.Errorf("status %q", hs.m.Status().Text)
	}
}
