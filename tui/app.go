package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/compare"
	"github.com/gnnscope/gnnscope/tui/dashboard"
	"github.com/gnnscope/gnnscope/tui/newexp"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// StatusTimeout is how long a status message stays in the status bar.
const StatusTimeout = 8 * time.Second

// clearStatusMsg clears the status bar unless a newer message came.
type clearStatusMsg struct{ seq int }

// Model is the workbench's root model.
type Model struct {
	c       *common.Common
	screen  common.Screen
	history []common.Screen

	list *sessionlist.Model
	form *newexp.Model
	dash *dashboard.Model
	cmp  *compare.Model

	help       bool
	helpOffset int

	status    common.StatusMsg
	statusSeq int
	quitting  bool
}

// New returns the root model on c; it opens on the sessions list.
func New(c *common.Common) *Model {
	return &Model{c: c, screen: common.ScreenSessions, list: sessionlist.New(c)}
}

// Init loads the sessions list.
func (m *Model) Init() tea.Cmd { return m.list.Init() }

// Screen returns the screen on display.
func (m *Model) Screen() common.Screen { return m.screen }

// HelpOpen reports whether the help overlay is open.
func (m *Model) HelpOpen() bool { return m.help }

// Status returns the status bar's message.
func (m *Model) Status() common.StatusMsg { return m.status }

// List returns the sessions list.
func (m *Model) List() *sessionlist.Model { return m.list }

// Close releases what the screens hold (journal tails, replays).
func (m *Model) Close() {
	if m.dash != nil {
		m.dash.Close()
		m.dash = nil
	}
	m.list.Close()
}

// bodySize is the area screens draw in: all but the header and the
// status bar.
func (m *Model) bodySize() (int, int) {
	return max(m.c.Width, 0), max(m.c.Height-2, 0)
}

func (m *Model) resize() {
	w, h := m.bodySize()
	m.list.SetSize(w, h)
	if m.form != nil {
		m.form.SetSize(w, h)
	}
	if m.dash != nil {
		m.dash.SetSize(w, h)
	}
	if m.cmp != nil {
		m.cmp.SetSize(w, h)
	}
}

// capturing reports whether the screen on display takes every key (a
// form field, a dialog, a confirmation), so q, ? and esc are its own.
func (m *Model) capturing() bool {
	switch m.screen {
	case common.ScreenSessions:
		return m.list.Capturing()
	case common.ScreenNew:
		return m.form != nil
	case common.ScreenCompare:
		return m.cmp != nil && m.cmp.Capturing()
	}
	return false
}

// Update routes messages: keys to the help overlay or the screen on
// display, navigation messages to the root, everything else to every
// screen (each knows its own messages).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.SetSize(msg.Width, msg.Height)
		m.resize()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case common.OpenDashboardMsg:
		return m, m.openDashboard(msg.Session, msg.Replay)
	case common.OpenCompareMsg:
		cm, err := compare.New(m.c, msg.Refs)
		if err != nil {
			return m, m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
		}
		m.cmp = cm
		w, h := m.bodySize()
		m.cmp.SetSize(w, h)
		return m, tea.Batch(m.push(common.ScreenCompare), m.cmp.Init())
	case common.OpenNewMsg:
		m.form = newexp.New(m.c)
		w, h := m.bodySize()
		m.form.SetSize(w, h)
		return m, tea.Batch(m.push(common.ScreenNew), m.form.Init())
	case common.BackMsg:
		return m, m.back()
	case common.LaunchedMsg:
		return m, m.launched(msg)
	case common.StatusMsg:
		return m, m.setStatus(msg)
	case clearStatusMsg:
		if msg.seq == m.statusSeq {
			m.status = common.StatusMsg{}
		}
		return m, nil
	}
	var cmds []tea.Cmd
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	cmds = append(cmds, cmd)
	if m.form != nil {
		m.form, cmd = m.form.Update(msg)
		cmds = append(cmds, cmd)
	}
	if m.dash != nil {
		m.dash, cmd = m.dash.Update(msg)
		cmds = append(cmds, cmd)
	}
	if m.cmp != nil {
		m.cmp, cmd = m.cmp.Update(msg)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) setStatus(st common.StatusMsg) tea.Cmd {
	m.status = st
	m.statusSeq++
	seq := m.statusSeq
	return m.c.Tick(StatusTimeout, func(time.Time) tea.Msg { return clearStatusMsg{seq} })
}

// key handles a key press.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	keys := m.c.Keys
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	if m.help {
		switch {
		case key.Matches(msg, keys.Help), msg.String() == "esc":
			m.help = false
		case key.Matches(msg, keys.Quit):
			return m.quit()
		case key.Matches(msg, keys.Up):
			m.helpOffset = max(m.helpOffset-1, 0)
		case key.Matches(msg, keys.Down):
			m.helpOffset++
		case key.Matches(msg, keys.PageUp):
			m.helpOffset = max(m.helpOffset-10, 0)
		case key.Matches(msg, keys.PageDown):
			m.helpOffset += 10
		}
		return nil
	}
	if !m.capturing() {
		switch {
		case key.Matches(msg, keys.Quit):
			return m.quit()
		case key.Matches(msg, keys.Help):
			m.help, m.helpOffset = true, 0
			return nil
		case key.Matches(msg, keys.Back) && m.screen != common.ScreenSessions:
			return m.back()
		}
	}
	var cmd tea.Cmd
	switch m.screen {
	case common.ScreenSessions:
		m.list, cmd = m.list.Update(msg)
	case common.ScreenNew:
		m.form, cmd = m.form.Update(msg)
	case common.ScreenDashboard:
		m.dash, cmd = m.dash.Update(msg)
	case common.ScreenCompare:
		m.cmp, cmd = m.cmp.Update(msg)
	}
	return cmd
}

// quit ends the program; background runs keep running.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// push shows a screen, remembering the current one for back.
func (m *Model) push(s common.Screen) tea.Cmd {
	if s == m.screen {
		return nil
	}
	if m.screen == common.ScreenSessions {
		m.list.Blur()
	}
	m.history = append(m.history, m.screen)
	m.screen = s
	return nil
}

// back returns to the previous screen, releasing the one left.
func (m *Model) back() tea.Cmd {
	m.leave(m.screen)
	if len(m.history) == 0 {
		m.screen = common.ScreenSessions
	} else {
		m.screen = m.history[len(m.history)-1]
		m.history = m.history[:len(m.history)-1]
	}
	if m.screen == common.ScreenSessions {
		return m.list.Focus()
	}
	return nil
}

// leave releases a screen's model.
func (m *Model) leave(s common.Screen) {
	switch s {
	case common.ScreenDashboard:
		if m.dash != nil {
			m.dash.Close()
			m.dash = nil
		}
	case common.ScreenCompare:
		m.cmp = nil
	case common.ScreenNew:
		m.form = nil
	}
}

// openDashboard shows a session's dashboard, replacing an open one.
func (m *Model) openDashboard(id string, replay bool) tea.Cmd {
	d, err := dashboard.New(m.c, id, replay)
	if err != nil {
		return m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
	}
	if m.dash != nil {
		m.dash.Close()
	}
	m.dash = d
	w, h := m.bodySize()
	m.dash.SetSize(w, h)
	// The form that launched the session is done with.
	if m.screen == common.ScreenNew {
		m.leave(common.ScreenNew)
		m.screen = m.history[len(m.history)-1]
		m.history = m.history[:len(m.history)-1]
	}
	return tea.Batch(m.push(common.ScreenDashboard), m.dash.Init())
}

// launched follows a launch: on success the list picks the session up
// and its dashboard opens; a failure goes to the form (inline) or the
// status bar.
func (m *Model) launched(msg common.LaunchedMsg) tea.Cmd {
	var cmds []tea.Cmd
	if m.form != nil {
		var cmd tea.Cmd
		m.form, cmd = m.form.Update(msg)
		cmds = append(cmds, cmd)
	}
	if msg.Session == "" {
		cmds = append(cmds, m.setStatus(common.StatusMsg{Text: msg.Err.Error(), Err: true}))
		return tea.Batch(cmds...)
	}
	st := common.StatusMsg{Text: fmt.Sprintf("launched session %s in the background (%s)", msg.Session, msg.Dir)}
	if msg.Err != nil {
		st = common.StatusMsg{Text: msg.Err.Error(), Err: true}
	}
	m.list.Select(msg.Session)
	cmds = append(cmds, m.list.Poll(), m.openDashboard(msg.Session, false), m.setStatus(st))
	return tea.Batch(cmds...)
}

// title names the screen on display.
func (m *Model) title() string {
	switch m.screen {
	case common.ScreenNew:
		return "New experiment"
	case common.ScreenDashboard:
		if m.dash != nil {
			return m.dash.Title()
		}
	case common.ScreenCompare:
		if m.cmp != nil {
			return m.cmp.Title()
		}
	}
	return "Sessions"
}

// shortHelp lists the keys of the screen on display for the status bar.
func (m *Model) shortHelp() []key.Binding {
	k := m.c.Keys
	switch m.screen {
	case common.ScreenSessions:
		return m.list.ShortHelp()
	case common.ScreenNew:
		if m.form != nil {
			return m.form.ShortHelp()
		}
	case common.ScreenCompare:
		if m.cmp != nil {
			return m.cmp.ShortHelp()
		}
	case common.ScreenDashboard:
		return []key.Binding{k.NextPane, k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekForward, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Back, k.Help, k.Quit}
}

// View draws the header, the screen (or the help overlay) and the status
// bar, cut to the terminal so nothing wraps at any size.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "gnnscope"
	return v
}

func (m *Model) render() string {
	w, h := m.c.Width, m.c.Height
	if m.quitting || w <= 0 || h <= 0 {
		return ""
	}
	bw, bh := m.bodySize()
	var body string
	if m.help {
		body = m.helpView(bw, bh)
	} else {
		switch m.screen {
		case common.ScreenSessions:
			body = m.list.View()
		case common.ScreenNew:
			body = m.form.View()
		case common.ScreenDashboard:
			body = m.dash.View()
		case common.ScreenCompare:
			body = m.cmp.View()
		}
	}
	body = common.Fit(body, bw, bh)
	if n := common.Lines(body); n < bh {
		body += strings.Repeat("\n", bh-n)
	}
	out := m.header(w)
	if h >= 2 {
		out += "\n" + body
	}
	if h >= 3 {
		out += "\n" + m.statusBar(w)
	}
	return common.Fit(out, w, h)
}

// header is the top line: the program, the screen, and what runs.
func (m *Model) header(w int) string {
	st := m.c.Styles
	sep := " › "
	if m.c.Opts.ASCII {
		sep = " > "
	}
	left := st.Title.Render("gnnscope") + sep + m.title()
	right := ""
	n := 0
	for _, e := range m.list.Entries() {
		if e.Running() {
			n++
		}
	}
	if n > 0 {
		right = st.Warn.Render(fmt.Sprintf("%d running", n))
	}
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if right == "" || gap < 1 {
		return common.Truncate(left, w, st.Glyphs.Ellipsis)
	}
	return left + strings.Repeat(" ", gap) + right
}

// statusBar is the bottom line: the last status message, else the keys
// of the screen.
func (m *Model) statusBar(w int) string {
	st := m.c.Styles
	if m.status.Text != "" {
		text := strings.ReplaceAll(m.status.Text, "\n", " ")
		if m.status.Err {
			return common.Truncate(st.Error.Render(text), w, st.Glyphs.Ellipsis)
		}
		return common.Truncate(st.StatusBar.Render(text), w, st.Glyphs.Ellipsis)
	}
	bindings := m.shortHelp()
	if m.help {
		bindings = []key.Binding{m.c.Keys.Help, m.c.Keys.Up, m.c.Keys.Down, m.c.Keys.Quit}
	}
	var parts []string
	used := 0
	for _, b := range bindings {
		p := st.HelpKey.Render(m.c.KeyName(b)) + " " + st.HelpDesc.Render(shortDesc(b))
		pw := ansi.StringWidth(p) + 2
		if used+pw > w+2 {
			break
		}
		parts = append(parts, p)
		used += pw
	}
	return strings.Join(parts, "  ")
}

// shortDesc is a binding's description cut at its first parenthesis.
func shortDesc(b key.Binding) string {
	d := b.Help().Desc
	if i := strings.Index(d, " ("); i > 0 {
		d = d[:i]
	}
	return d
}
