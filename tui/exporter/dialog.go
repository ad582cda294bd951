package exporter

import (
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
)

// Target is what a dialog exports.
type Target struct {
	// Title names it ("session ID", "3 runs").
	Title string
	// Refs are the runs of the comparison and the trace.
	Refs []sessions.RunRef
	// Comparison, if set, is their comparison already computed.
	Comparison *sessions.Comparison
	// Session, when the target is one session, can be archived.
	Session *sessions.Session
	// Checked are the kinds checked when the dialog opens.
	Checked []Kind
}

// DoneMsg reports the end of an export: the paths written and any error.
type DoneMsg struct {
	Wrote []string
	Err   error
}

// ClosedMsg reports that the user closed the dialog without exporting.
type ClosedMsg struct{}

// Model is the export dialog: a checkbox per kind, the folder of the
// comparison files and the trace (default: the first run's session
// folder), the archive's path (default: ID.tar.gz in the working
// directory); enter writes, esc closes.
type Model struct {
	c       *common.Common
	target  Target
	kinds   []Kind
	checked map[Kind]bool
	dir     textinput.Model
	archive textinput.Model
	focus   int // 0..len(kinds)-1: a checkbox; then dir, then archive
	busy    bool
	err     string
	// confirm is set when the last enter found files in the way: the
	// next enter overwrites them; any other change clears it.
	confirm bool
	width   int
}

// New returns a dialog for target.
func New(c *common.Common, target Target) *Model {
	m := &Model{c: c, target: target, checked: map[Kind]bool{}}
	for _, k := range Kinds {
		if k == Archive && target.Session == nil {
			continue
		}
		m.kinds = append(m.kinds, k)
	}
	for _, k := range target.Checked {
		m.checked[k] = true
	}
	m.dir = c.NewInput("folder")
	m.archive = c.NewInput("file.tar.gz")
	switch {
	case target.Session != nil:
		m.dir.SetValue(target.Session.Dir())
	case len(target.Refs) > 0:
		m.dir.SetValue(target.Refs[0].Session.Dir())
	}
	if target.Session != nil {
		// in the working directory, as `gnnscope sessions export -o` would
		m.archive.SetValue(target.Session.ID() + ".tar.gz")
	}
	m.dir.CursorEnd()
	m.archive.CursorEnd()
	return m
}

// SetWidth sets the width the dialog may use.
func (m *Model) SetWidth(w int) {
	m.width = w
	in := max(w-12, 8)
	m.dir.SetWidth(in)
	m.archive.SetWidth(in)
}

// rows is the number of focusable rows.
func (m *Model) rows() int {
	n := len(m.kinds) + 1
	if m.target.Session != nil {
		n++
	}
	return n
}

func (m *Model) setFocus(i int) tea.Cmd {
	n := m.rows()
	m.focus = (i%n + n) % n
	m.dir.Blur()
	m.archive.Blur()
	switch m.focus - len(m.kinds) {
	case 0:
		return m.dir.Focus()
	case 1:
		return m.archive.Focus()
	}
	return nil
}

// Request returns what the dialog would write now.
func (m *Model) Request() Request {
	req := Request{Refs: m.target.Refs, Comparison: m.target.Comparison, Session: m.target.Session,
		Dir: strings.TrimSpace(m.dir.Value()), ArchivePath: strings.TrimSpace(m.archive.Value())}
	for _, k := range m.kinds {
		if m.checked[k] {
			req.Kinds = append(req.Kinds, k)
		}
	}
	return req
}

// Done takes the DoneMsg of the export the dialog started. When nothing
// was written and there is an error, the dialog stays open showing it
// (open is true); otherwise the dialog is done and st says what was
// written, and what failed if anything did.
func (m *Model) Done(msg DoneMsg) (open bool, st common.StatusMsg) {
	if msg.Err != nil && len(msg.Wrote) == 0 {
		m.Update(msg)
		return true, st
	}
	st.Text = Summary(msg.Wrote)
	if msg.Err != nil {
		st.Text, st.Err = st.Text+"; "+msg.Err.Error(), true
	}
	return false, st
}

// Update handles a key; the dialog captures every key while open.
func (m *Model) Update(msg tea.Msg) (*Model, tea.Cmd) {
	switch msg := msg.(type) {
	case DoneMsg:
		m.busy = false
		var ex *ExistsError
		switch {
		case errors.As(msg.Err, &ex):
			m.confirm = true
			m.err = ex.Error() + ": enter overwrites, esc cancels"
		case msg.Err != nil:
			m.err = msg.Err.Error()
		}
		return m, nil
	case tea.KeyPressMsg:
		if m.busy {
			return m, nil
		}
		keys := m.c.Keys
		inInput := m.focus >= len(m.kinds)
		switch {
		case msg.String() == "esc":
			return m, func() tea.Msg { return ClosedMsg{} }
		case msg.String() == "enter":
			req := m.Request()
			if len(req.Kinds) == 0 {
				m.err = "nothing to write: check at least one kind (space)"
				return m, nil
			}
			req.Overwrite = m.confirm
			m.busy, m.err, m.confirm = true, "", false
			return m, func() tea.Msg {
				wrote, err := Write(req)
				return DoneMsg{Wrote: wrote, Err: err}
			}
		case msg.String() == "tab" || msg.String() == "down" || (!inInput && key.Matches(msg, keys.Down)):
			return m, m.setFocus(m.focus + 1)
		case msg.String() == "shift+tab" || msg.String() == "up" || (!inInput && key.Matches(msg, keys.Up)):
			return m, m.setFocus(m.focus - 1)
		case !inInput && (msg.String() == "space" || msg.String() == "x"):
			k := m.kinds[m.focus]
			m.checked[k] = !m.checked[k]
			m.confirm, m.err = false, ""
			return m, nil
		}
		if inInput { // typing changes the paths: ask again
			m.confirm = false
		}
		var cmd tea.Cmd
		switch m.focus - len(m.kinds) {
		case 0:
			m.dir, cmd = m.dir.Update(msg)
		case 1:
			m.archive, cmd = m.archive.Update(msg)
		}
		return m, cmd
	}
	return m, nil
}

// View renders the dialog.
func (m *Model) View() string {
	st := m.c.Styles
	var b strings.Builder
	b.WriteString(st.Title.Render("Export " + m.target.Title))
	b.WriteString("\n")
	cursor := func(i int) string {
		if i == m.focus {
			return st.Selected.Render(m.c.Styles.Glyphs.Cursor) + " "
		}
		return "  "
	}
	for i, k := range m.kinds {
		box := "[ ]"
		if m.checked[k] {
			box = "[x]"
		}
		file := k.FileName(m.Request().Prefix())
		if k == Archive {
			file = "to the archive path below"
		}
		fmt.Fprintf(&b, "%s%s %-16s %s\n", cursor(i), box, k, st.Muted.Render(file))
	}
	fmt.Fprintf(&b, "%sFolder:  %s\n", cursor(len(m.kinds)), m.dir.View())
	if m.target.Session != nil {
		fmt.Fprintf(&b, "%sArchive: %s\n", cursor(len(m.kinds)+1), m.archive.View())
	}
	switch {
	case m.busy:
		b.WriteString(st.Muted.Render("writing..."))
	case m.err != "":
		for _, l := range draw.Wrap(m.err, max(m.width, 20)) {
			b.WriteString(st.Error.Render(l) + "\n")
		}
	default:
		b.WriteString(st.Muted.Render("space check  tab move  enter write  esc cancel"))
	}
	return b.String()
}
