package exporter

import (
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/common"
)

// Slot is where a screen keeps its export dialog: empty, or the dialog
// open over the screen. It handles the dialog's messages alike for every
// screen: the keys while it is open, the end of its export and its
// closing. The zero Slot is empty.
type Slot struct{ m *Model }

// Open opens a dialog for target, w columns wide.
func (s *Slot) Open(c *common.Common, target Target, w int) {
	s.m = New(c, target)
	s.m.SetWidth(w)
}

// IsOpen reports whether the dialog is open; it takes every key then.
func (s *Slot) IsOpen() bool { return s.m != nil }

// Dialog returns the open dialog, or nil.
func (s *Slot) Dialog() *Model { return s.m }

// SetWidth sets the width the dialog may use, if it is open.
func (s *Slot) SetWidth(w int) {
	if s.m != nil {
		s.m.SetWidth(w)
	}
}

// View draws the dialog ("" when the slot is empty).
func (s *Slot) View() string {
	if s.m == nil {
		return ""
	}
	return s.m.View()
}

// Update handles the dialog's messages and reports whether msg was one:
// a key while the dialog is open; the DoneMsg of its export, which
// closes it and says in the status bar what was written (see Done: an
// error with nothing written keeps it open, showing the error); its
// ClosedMsg. Other messages, and these with the slot empty, are the
// screen's.
func (s *Slot) Update(msg tea.Msg) (tea.Cmd, bool) {
	if s.m == nil {
		return nil, false
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		var cmd tea.Cmd
		s.m, cmd = s.m.Update(msg)
		return cmd, true
	case DoneMsg:
		open, st := s.m.Done(msg)
		if !open {
			s.m = nil
			return func() tea.Msg { return st }, true
		}
		return nil, true
	case ClosedMsg:
		s.m = nil
		return nil, true
	}
	return nil, false
}
