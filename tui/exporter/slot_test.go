package exporter

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// TestSlot: an empty slot leaves every message to its screen; an open
// one takes the keys, stays open on a failed export, and closes on a
// done one (a status line) or on ClosedMsg.
func TestSlot(t *testing.T) {
	st := fixture.Standard(t)
	refs, _ := st.SelectRuns([]string{"20260102-030400-aaaa"})
	var s Slot
	for _, msg := range []tea.Msg{fixture.Key("x"), DoneMsg{}, ClosedMsg{}} {
		if _, ok := s.Update(msg); ok || s.IsOpen() || s.View() != "" {
			t.Errorf("empty slot took %T", msg)
		}
	}
	s.Open(fixture.Common(st, 80, 24), Target{Title: "x", Refs: refs, Checked: []Kind{Markdown}}, 80)
	if !s.IsOpen() || !strings.Contains(s.View(), "Export x") {
		t.Fatalf("open: %q", s.View())
	}
	if _, ok := s.Update(fixture.Key("tab")); !ok {
		t.Error("the open dialog did not take a key")
	}
	if _, ok := s.Update(common.StatusMsg{}); ok {
		t.Error("the slot took a message not the dialog's")
	}
	if cmd, ok := s.Update(DoneMsg{Err: errors.New("disk full")}); !ok || cmd != nil || !s.IsOpen() || !strings.Contains(s.View(), "disk full") {
		t.Errorf("failed export: ok %v, open %v\n%s", ok, s.IsOpen(), s.View())
	}
	dir := filepath.Join("out", "x")
	cmd, ok := s.Update(DoneMsg{Wrote: []string{filepath.Join(dir, "compare.md")}})
	if !ok || s.IsOpen() || cmd == nil {
		t.Fatalf("done export: ok %v, open %v, cmd %v", ok, s.IsOpen(), cmd != nil)
	}
	if got, _ := cmd().(common.StatusMsg); got.Err || got.Text != "wrote compare.md in "+dir {
		t.Errorf("status %+v", got)
	}
	s.Open(fixture.Common(st, 80, 24), Target{Title: "x", Refs: refs}, 80)
	if _, ok := s.Update(ClosedMsg{}); !ok || s.IsOpen() {
		t.Error("ClosedMsg did not close the dialog")
	}
}
