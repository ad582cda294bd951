package sessionlist

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/exporter"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// key handles a key press in the list's current mode (the export
// dialog, when open, took it in Update): a pending confirmation takes
// only y or n, and otherwise the list's own keys apply.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.confirm != nil {
		return m.confirmKey(msg)
	}
	return m.listKey(msg)
}

// confirmKey answers the pending confirmation: y runs its action, n, esc
// or back drop it, and any other key is ignored.
func (m *Model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	keys := m.c.Keys
	c := m.confirm
	switch {
	case key.Matches(msg, keys.Confirm):
		m.confirm = nil
		return c.action
	case msg.String() == "n" || msg.String() == "esc" || key.Matches(msg, keys.Back):
		m.confirm = nil
		return status(common.StatusMsg{Text: "nothing done"})
	}
	return nil // only y or n
}

// listKey handles the keys of the list itself: those that need no row
// first, then those that act on the row under the cursor (as it was
// before the key moved it).
func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	e, r := m.current()
	if cmd, done := m.globalKey(msg); done {
		return cmd
	}
	if e == nil {
		return nil
	}
	return m.rowKey(msg, e, r)
}

// globalKey handles cursor movement and the actions that need no row;
// done reports an action that ends the key's handling (a move does not).
func (m *Model) globalKey(msg tea.KeyPressMsg) (cmd tea.Cmd, done bool) {
	keys := m.c.Keys
	switch {
	case key.Matches(msg, keys.Up):
		m.move(-1)
	case key.Matches(msg, keys.Down):
		m.move(1)
	case key.Matches(msg, keys.PageUp):
		m.move(-max(m.listHeight()-1, 1))
	case key.Matches(msg, keys.PageDown):
		m.move(max(m.listHeight()-1, 1))
	case key.Matches(msg, keys.Top):
		m.move(-len(m.rows))
	case key.Matches(msg, keys.Bottom):
		m.move(len(m.rows))
	case key.Matches(msg, keys.NewExperiment):
		return send(common.OpenNewMsg{}), true
	case key.Matches(msg, keys.Launch):
		exp, variants := launch.DefaultExperiment()
		return m.Launch.Cmd(exp, variants, nil), true
	case key.Matches(msg, keys.Refresh):
		return tea.Batch(status(common.StatusMsg{Text: "reloading sessions"}), m.load()), true
	}
	return nil, false
}

// rowKey handles the keys that act on the session or run of row r (whose
// session is e).
func (m *Model) rowKey(msg tea.KeyPressMsg, e *Entry, r row) tea.Cmd {
	keys := m.c.Keys
	switch {
	case key.Matches(msg, keys.Right):
		m.expand(e)
	case key.Matches(msg, keys.Left):
		m.collapse(e, r)
	case key.Matches(msg, keys.Select):
		m.toggleSelected(r)
	case key.Matches(msg, keys.Open):
		return send(common.OpenDashboardMsg{Session: e.ID})
	case key.Matches(msg, keys.Replay):
		return send(common.OpenDashboardMsg{Session: e.ID, Replay: true})
	case key.Matches(msg, keys.Edit):
		return send(common.OpenNewMsg{From: e.ID})
	case key.Matches(msg, keys.Compare):
		refs := m.Selected()
		if len(refs) == 0 {
			refs = []string{m.ref(r)}
		}
		return send(common.OpenCompareMsg{Refs: refs})
	case key.Matches(msg, keys.Export):
		return m.openExport(m.ref(r))
	case key.Matches(msg, keys.Delete):
		return m.askDelete(e)
	case key.Matches(msg, keys.Cancel):
		return m.askCancel(e)
	}
	return nil
}

// expand shows the runs of session e under it.
func (m *Model) expand(e *Entry) {
	if !m.expanded[e.ID] && len(e.Runs) > 0 {
		m.expanded[e.ID] = true
		m.buildRows()
	}
}

// collapse hides the runs of session e and puts the cursor on the
// session's row (r is the row the cursor was on).
func (m *Model) collapse(e *Entry, r row) {
	if !m.expanded[e.ID] {
		return
	}
	delete(m.expanded, e.ID)
	m.buildRows()
	for i, rr := range m.rows {
		if rr.entry == r.entry && rr.run < 0 {
			m.cursor = i
		}
	}
	m.scroll()
}

// toggleSelected selects or unselects row r and moves to the next row.
func (m *Model) toggleSelected(r row) {
	ref := m.ref(r)
	if m.selected[ref] {
		delete(m.selected, ref)
	} else {
		m.selected[ref] = true
	}
	m.move(1)
}

// askDelete asks to delete session e, which must not be running.
func (m *Model) askDelete(e *Entry) tea.Cmd {
	if e.Running() {
		return status(common.StatusMsg{Text: fmt.Sprintf("session %s is running: cancel it first (K)", e.ID), Err: true})
	}
	id, store := e.ID, m.c.Store
	m.confirm = &confirmation{
		prompt: fmt.Sprintf("Delete session %s and all its journals? (y/n)", id),
		action: func() tea.Msg {
			if err := store.Delete(id); err != nil {
				return actionMsg{err: err}
			}
			return actionMsg{text: "deleted session " + id}
		},
	}
	return nil
}

// askCancel asks to cancel session e, which must be running.
func (m *Model) askCancel(e *Entry) tea.Cmd {
	if !e.Running() {
		return status(common.StatusMsg{Text: fmt.Sprintf("session %s is not running", e.ID), Err: true})
	}
	id, store := e.ID, m.c.Store
	m.confirm = &confirmation{
		prompt: fmt.Sprintf("Cancel session %s? Running runs stop, pending ones never start. (y/n)", id),
		action: func() tea.Msg {
			rep, err := runner.Cancel(store, id)
			if err != nil {
				return actionMsg{err: err}
			}
			text := "canceled session " + id
			if len(rep.Signaled) > 0 {
				text += ": stopping " + strings.Join(rep.Signaled, ", ")
			}
			return actionMsg{text: text}
		},
	}
	return nil
}

// openExport opens the export dialog for the selection, or for the row's
// session or run when nothing is selected.
func (m *Model) openExport(cur string) tea.Cmd {
	refs := m.Selected()
	if len(refs) == 0 {
		refs = []string{cur}
	}
	runs, err := m.c.Store.SelectRuns(refs)
	if err != nil {
		return status(common.StatusMsg{Text: "export: " + err.Error(), Err: true})
	}
	t := exporter.Target{Refs: runs, Checked: []exporter.Kind{exporter.Markdown, exporter.CSV, exporter.LaTeX, exporter.Trace}}
	if len(refs) == 1 && !strings.Contains(refs[0], "/") {
		t.Session = runs[0].Session
		t.Title = "session " + refs[0]
		t.Checked = append(t.Checked, exporter.Archive)
	} else {
		t.Title = fmt.Sprintf("%d runs", len(runs))
	}
	m.export.Open(m.c, t, m.width)
	return nil
}

func (m *Model) move(d int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), len(m.rows)-1)
	m.scroll()
}

// scroll keeps the cursor's row visible.
func (m *Model) scroll() {
	h := m.listHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if h > 0 && m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(min(m.offset, len(m.rows)-h), 0)
}
