package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/dashboard"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// TestMouseOnDashboard: the workbench reports the mouse; a click on a
// timeline lane (terminal coordinates: the header line above the
// dashboard) opens the span's details, esc closes them before going
// back.
func TestMouseOnDashboard(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 100, 30, common.Options{ASCII: true})
	if mode := hs.m.View().MouseMode; mode != tea.MouseModeCellMotion {
		t.Errorf("mouse mode %v", mode)
	}
	hs.send(tea.MouseClickMsg{X: 10, Y: 5, Button: tea.MouseLeft}) // the list: nothing
	hs.send(common.OpenDashboardMsg{Session: "20260102-030400-aaaa"})
	if !on[*dashboard.Model](hs.m) {
		t.Fatalf("screen %q (status %q)", hs.m.Screen().Title(), hs.m.Status().Text)
	}
	// the replay feeds the runs in the background: wait for its end
	var lines []string
	x, y := -1, -1
	for deadline := time.Now().Add(10 * time.Second); y < 0 && time.Now().Before(deadline); {
		v := ansi.Strip(hs.view())
		lines = strings.Split(v, "\n")
		for i, l := range lines {
			if !strings.Contains(v, "\nend ") || strings.Contains(v, "waiting") {
				break // the replay has not reached its end yet
			}
			if strings.HasPrefix(l, "Timeline") && i+1 < len(lines) && strings.Contains(lines[i+1], "|") {
				y, x = i+1, strings.Index(lines[i+1], "|")+5
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if y < 0 {
		t.Fatalf("no timeline lane on the screen:\n%s", strings.Join(lines, "\n"))
	}
	hs.send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	hs.send(tea.MouseReleaseMsg{X: x, Y: y, Button: tea.MouseLeft})
	if v := ansi.Strip(hs.view()); !strings.Contains(v, "Span ") || !strings.Contains(v, "duration ") {
		t.Fatalf("no span details after a click on a lane:\n%s", v)
	}
	hs.press("esc")
	if v := ansi.Strip(hs.view()); !on[*dashboard.Model](hs.m) || strings.Contains(v, "Span ") {
		t.Errorf("esc: screen %q, details still shown:\n%s", hs.m.Screen().Title(), v)
	}
	hs.press("esc")
	if !on[*sessionlist.Model](hs.m) {
		t.Errorf("second esc: screen %q", hs.m.Screen().Title())
	}
}
