package dashboard

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
)

// keyOf returns the key press of a named key ("left", "shift+right",
// "enter") or of a character.
func keyOf(name string) tea.KeyPressMsg {
	switch name {
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "shift+left":
		return tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModShift}
	case "shift+right":
		return tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	return press(name)
}

func (m *Model) keys(names ...string) {
	for _, n := range names {
		m.Update(keyOf(n))
		m.View()
	}
}

// shownRange is the focused timeline's window on display.
func shownRange(m *Model) (int64, int64) {
	m.set.Lock()
	defer m.set.Unlock()
	return m.panels[m.focus].timeline.Range(m.set.Runs()[m.focus])
}

// TestPanKeys: ←/h pan the focused timeline earlier, →/l later, and the
// cursor shows; the other run's timeline stays.
func TestPanKeys(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 200, 50)
	m.View()
	m.keys("z", "z") // 5.356 s run: 5 s, 2 s
	a0, a1 := shownRange(m)
	if a1-a0 != 2e9 {
		t.Fatalf("window after z z: %d ns", a1-a0)
	}
	other0, _ := m.panels[1].timeline.Range(m.set.Runs()[1])
	for _, k := range []string{"left", "h"} {
		m.keys(k)
		b0, b1 := shownRange(m)
		if b0 >= a0 || b1-b0 != a1-a0 {
			t.Errorf("%s: window %d..%d, was %d..%d", k, b0, b1, a0, a1)
		}
		a0, a1 = b0, b1
	}
	if !strings.Contains(m.View(), "cursor ") || !strings.Contains(m.View(), "^") {
		t.Errorf("no cursor after panning:\n%s", m.View())
	}
	for _, k := range []string{"right", "l"} {
		m.keys(k)
		b0, _ := shownRange(m)
		if b0 <= a0 {
			t.Errorf("%s: start %d, was %d", k, b0, a0)
		}
		a0 = b0
	}
	if o, _ := m.panels[1].timeline.Range(m.set.Runs()[1]); o != other0 {
		t.Error("panning moved the other run's timeline")
	}
}

// TestCursorKeys: < > and shift+arrows move the cursor a cell, ↑ ↓ its
// lane.
func TestCursorKeys(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 120, 40)
	m.View()
	m.keys("tab", "z", ">") // the second run, its cursor
	tl := m.panels[1].timeline
	first := m.View()
	for _, k := range []string{">", "shift+right", ".", "<", "shift+left", ",", "<"} {
		m.keys(k)
	}
	if m.View() == first {
		t.Error("the cursor keys changed nothing")
	}
	m.keys(">")
	if m.View() != first {
		t.Errorf("three cells later, three earlier, one more: not back where it was")
	}
	m.keys("down", "j")
	if !strings.Contains(ansi.Strip(m.View()), "sampler/1>") {
		t.Errorf("the cursor's lane is not marked on sampler/1:\n%s", m.View())
	}
	m.keys("up", "k")
	_ = tl
}

// TestEnterOpensDetails: enter opens the details of the span under the
// cursor, esc (Dismiss) closes them before going back.
func TestEnterOpensDetails(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 80, 24)
	m.View()
	m.keys("z", "z", "z", "enter")
	v := ansi.Strip(m.View())
	for _, want := range []string{"Span ", "lane compute", "epoch ", "batch ", "start ", "duration ", "attributes: "} {
		if !strings.Contains(v, want) {
			t.Errorf("details lack %q:\n%s", want, v)
		}
	}
	golden.Check(t, "details_ascii_80x24", m.View())
	m.keys("b")
	if strings.Contains(m.View(), "Span ") {
		t.Error("the details show with the bars")
	}
	m.keys("b")
	if !strings.Contains(m.View(), "Span ") {
		t.Error("the details did not come back with the timeline")
	}
	if !m.Dismiss() || strings.Contains(m.View(), "Span ") {
		t.Error("Dismiss did not close the details")
	}
	if m.Dismiss() {
		t.Error("Dismiss with nothing open")
	}
}

// TestEpochKeys: g shows the first epoch, G the last, N g epoch N.
func TestEpochKeys(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 120, 40)
	m.View()
	m.keys("g")
	g0, g1 := shownRange(m)
	m.keys("G")
	l0, l1 := shownRange(m)
	if !(g0 < g1 && g1 <= l0 && l0 < l1) {
		t.Errorf("first epoch %d..%d, last %d..%d", g0, g1, l0, l1)
	}
	m.keys("2")
	if !strings.Contains(m.View(), "epoch 2_") {
		t.Errorf("the typed epoch does not show:\n%s", m.View())
	}
	m.keys("g")
	if a, b := shownRange(m); a < g1 || b > l0 || a >= b {
		t.Errorf("2 g: %d..%d, want between epochs 1 (to %d) and 3 (from %d)", a, b, g1, l0)
	}
	m.keys("1", "g")
	if a, b := shownRange(m); a != g0 || b != g1 {
		t.Errorf("1 g: %d..%d, want %d..%d", a, b, g0, g1)
	}
	m.keys("9", "9", "g")
	if a, b := shownRange(m); a != l0 || b != l1 {
		t.Errorf("99 g: %d..%d, want the nearest, the last %d..%d", a, b, l0, l1)
	}
}

// TestBarsKey: b shows the per-epoch bars in place of the timeline, b
// again the timeline.
func TestBarsKey(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 80, 24)
	m.View()
	m.keys("b")
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "Epochs") || !strings.Contains(v, "ep 1|") || strings.Contains(v, "Timeline") {
		t.Errorf("no bars after b:\n%s", v)
	}
	golden.Check(t, "bars_ascii_80x24", v)
	m.keys("b")
	if !strings.Contains(m.View(), "Timeline") {
		t.Error("b did not bring the timeline back")
	}
}

// TestMouse: a click on a lane's cell selects its span and focuses its
// run, the wheel zooms around the pointer, a drag pans.
func TestMouse(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 200, 50)
	m.View()
	p := m.panels[1]
	x, y := p.tlX+30, p.tlY+1 // the second run's first lane, 30 columns in
	m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: tea.MouseWheelUp})
	m.View()
	if p.timeline.WindowLabel() == "all" {
		t.Fatal("the wheel did not zoom in")
	}
	m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: tea.MouseWheelUp})
	m.View()
	m.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	if m.focus != 1 || p.timeline.Selected() < 0 {
		t.Fatalf("click: focus %d, selected %d", m.focus, p.timeline.Selected())
	}
	if v := m.View(); !strings.Contains(v, "Span ") {
		t.Errorf("no details after a click:\n%s", v)
	}
	a0, _ := shownRange(m)
	m.Update(tea.MouseMotionMsg{X: x + 10, Y: y, Button: tea.MouseLeft})
	m.Update(tea.MouseReleaseMsg{X: x + 10, Y: y, Button: tea.MouseLeft})
	m.View()
	if b0, _ := shownRange(m); b0 >= a0 {
		t.Errorf("dragging right did not pan earlier: %d, was %d", b0, a0)
	}
	m.Update(tea.MouseMotionMsg{X: x + 20, Y: y, Button: tea.MouseLeft})
	if c0, _ := shownRange(m); c0 != func() int64 { b0, _ := shownRange(m); return b0 }() {
		t.Error("motion after the release panned")
	}
	m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{X: x, Y: y, Button: tea.MouseWheelDown})
	m.View()
	if p.timeline.WindowLabel() != "all" {
		t.Errorf("the wheel did not zoom back out: %s", p.timeline.WindowLabel())
	}
	// off the timelines: nothing happens
	before := m.View()
	m.Update(tea.MouseClickMsg{X: 1, Y: 0, Button: tea.MouseLeft})
	if m.View() != before {
		t.Error("a click on the table changed the dashboard")
	}
}

// TestTimelineKeyKeepsLiveFocus: on a live dashboard, a timeline key on
// a finished run keeps the focus there instead of following the run in
// progress.
func TestTimelineKeyKeepsLiveFocus(t *testing.T) {
	c, sess, _, _ := store(t, true)
	m, err := New(c, sess.ID(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wait(t, "the journals", func() bool {
		m.set.Lock()
		defer m.set.Unlock()
		return m.set.Runs()[1].Events == 1500 && m.set.Runs()[0].Ended
	})
	m.View()
	m.focus = 0 // the finished baseline
	m.Update(tickMsg{id: m.id})
	if m.focus != 1 {
		t.Fatalf("focus %d: the live dashboard does not follow the run in progress", m.focus)
	}
	m.focus = 0
	m.keys("h")
	m.Update(tickMsg{id: m.id})
	if m.focus != 0 {
		t.Errorf("after a timeline key: focus %d, want the baseline (0)", m.focus)
	}
}
