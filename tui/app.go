package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/launch"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// StatusTimeout is how long a status message stays in the status bar.
const StatusTimeout = 8 * time.Second

// clearStatusMsg clears the status bar unless a newer message came.
type clearStatusMsg struct{ seq int }

// Model is the workbench's root model.
type Model struct {
	c      *common.Common
	launch launch.Launcher // for the new-experiment form and the L key
	// stack holds the screens for back; the sessions list is always at
	// the bottom, the screen on display at the top.
	stack []common.Screen
	list  *sessionlist.Model

	help       bool
	helpOffset int

	status    common.StatusMsg
	statusSeq int
	quitting  bool

	first *common.OpenDashboardMsg // opened at start (OpenFirst), or nil
	watch bool                     // watch the sessions folder (WatchSessions)
}

// New returns the root model on c; it opens on the sessions list.
// Experiments launch with l.
func New(c *common.Common, l launch.Launcher) *Model {
	m := &Model{c: c, list: sessionlist.New(c)}
	m.stack = []common.Screen{m.list}
	m.setLauncher(l)
	return m
}

// setLauncher makes l the launcher of the list and of forms opened later.
func (m *Model) setLauncher(l launch.Launcher) {
	m.launch = l
	m.list.Launch = l
}

// Init loads the sessions list.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.list.Init()}
	if m.watch {
		cmds = append(cmds, m.list.Watch())
	}
	if m.first != nil {
		first := *m.first
		cmds = append(cmds, func() tea.Msg { return first })
	}
	return tea.Batch(cmds...)
}

// WatchSessions makes the workbench watch the sessions folder from its
// start, so that sessions created elsewhere appear within a second
// (sessionlist.Model.Watch).
func (m *Model) WatchSessions() { m.watch = true }

// OpenFirst makes the workbench open a session's dashboard as it starts
// (gnnscope ui SESSION), above the sessions list.
func (m *Model) OpenFirst(msg common.OpenDashboardMsg) { m.first = &msg }

// Screen returns the screen on display.
func (m *Model) Screen() common.Screen { return m.stack[len(m.stack)-1] }

// Depth returns the number of screens in the back stack, the sessions
// list included.
func (m *Model) Depth() int { return len(m.stack) }

// HelpOpen reports whether the help overlay is open.
func (m *Model) HelpOpen() bool { return m.help }

// Status returns the status bar's message.
func (m *Model) Status() common.StatusMsg { return m.status }

// List returns the sessions list.
func (m *Model) List() *sessionlist.Model { return m.list }

// Close releases what the screens hold (journal tails, replays), top
// first; the workbench is ending, so their errors go nowhere.
func (m *Model) Close() {
	for i := len(m.stack) - 1; i >= 0; i-- {
		m.stack[i].Close()
	}
	m.stack = m.stack[:1]
}

// bodySize is the area screens draw in: all but the header and the
// status bar.
func (m *Model) bodySize() (int, int) {
	return max(m.c.Width, 0), max(m.c.Height-2, 0)
}

// Update routes messages: keys and the mouse to the help overlay or the
// screen on display, navigation messages to the root, everything else to
// every screen (each knows its own messages).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.open(msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.SetSize(msg.Width, msg.Height)
		w, h := m.bodySize()
		for _, s := range m.stack {
			s.SetSize(w, h)
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		if m.help {
			return m, nil
		}
		// the screen on display only, in its own coordinates
		return m, m.Screen().Update(inBody(msg))
	case common.PushMsg:
		return m, m.push(msg.Screen)
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
	return m, m.broadcast(msg)
}

// broadcast hands msg to every screen of the stack.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.stack))
	for _, s := range m.stack {
		cmds = append(cmds, s.Update(msg))
	}
	return tea.Batch(cmds...)
}

// inBody moves a mouse message into the body's coordinates: the body
// starts under the header line.
func inBody(msg tea.MouseMsg) tea.Msg {
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		return lineUp(msg)
	case tea.MouseReleaseMsg:
		return lineUp(msg)
	case tea.MouseWheelMsg:
		return lineUp(msg)
	case tea.MouseMotionMsg:
		return lineUp(msg)
	}
	return msg
}

// lineUp moves a mouse event one line up.
func lineUp[M tea.MouseClickMsg | tea.MouseReleaseMsg | tea.MouseWheelMsg | tea.MouseMotionMsg](msg M) M {
	ev := tea.Mouse(msg)
	ev.Y--
	return M(ev)
}

func (m *Model) setStatus(st common.StatusMsg) tea.Cmd {
	m.status = st
	m.statusSeq++
	seq := m.statusSeq
	return m.c.Tick(StatusTimeout, func(time.Time) tea.Msg { return clearStatusMsg{seq} })
}

// key handles a key press: ctrl+c always quits, the help overlay takes
// the keys while open, q and ? are the root's unless the screen on
// display captures every key, and every other key is the screen's own.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	keys := m.c.Keys
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	if m.help {
		m.helpKey(msg)
		if key.Matches(msg, keys.Quit) {
			return m.quit()
		}
		return nil
	}
	s := m.Screen()
	if !s.Capturing() {
		switch {
		case key.Matches(msg, keys.Quit):
			return m.quit()
		case key.Matches(msg, keys.Help):
			m.help, m.helpOffset = true, 0
			return nil
		}
	}
	return s.Update(msg)
}

// helpKey closes or scrolls the help overlay.
func (m *Model) helpKey(msg tea.KeyPressMsg) {
	keys := m.c.Keys
	switch {
	case key.Matches(msg, keys.Help), msg.String() == "esc":
		m.help = false
	case key.Matches(msg, keys.Up):
		m.helpOffset = max(m.helpOffset-1, 0)
	case key.Matches(msg, keys.Down):
		m.helpOffset++
	case key.Matches(msg, keys.PageUp):
		m.helpOffset = max(m.helpOffset-10, 0)
	case key.Matches(msg, keys.PageDown):
		m.helpOffset += 10
	}
}

// quit ends the program; background runs keep running.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// Push shows s over the screen on display, sized to the body, and runs
// its Init. A screen that is done with (common.Finisher: a form that
// launched) is replaced rather than covered; one that is covered and
// wants to know (common.Focuser) is told.
func (m *Model) Push(s common.Screen) tea.Cmd { return m.push(s) }

func (m *Model) push(s common.Screen) tea.Cmd {
	top := m.Screen()
	if f, ok := top.(common.Finisher); ok && f.Done() && len(m.stack) > 1 {
		top.Close()
		m.stack = m.stack[:len(m.stack)-1]
		top = m.Screen()
	}
	if f, ok := top.(common.Focuser); ok {
		f.Blur()
	}
	s.SetSize(m.bodySize())
	m.stack = append(m.stack, s)
	return s.Init()
}

// back returns to the previous screen, releasing the one left; an error
// in releasing it goes to the status bar.
func (m *Model) back() tea.Cmd {
	if len(m.stack) == 1 {
		return nil
	}
	left := m.Screen()
	m.stack = m.stack[:len(m.stack)-1]
	var cmds []tea.Cmd
	if err := left.Close(); err != nil {
		cmds = append(cmds, m.setStatus(common.StatusMsg{Text: err.Error(), Err: true}))
	}
	if f, ok := m.Screen().(common.Focuser); ok {
		cmds = append(cmds, f.Focus())
	}
	return tea.Batch(cmds...)
}

// launched follows a launch: on success the list picks the session up
// and its dashboard opens (in place of the form that launched it); a
// failure goes to the form (inline) and the status bar.
func (m *Model) launched(msg common.LaunchedMsg) tea.Cmd {
	cmds := []tea.Cmd{m.broadcast(msg)}
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

// View draws the header, the screen (or the help overlay) and the status
// bar, cut to the terminal so nothing wraps at any size.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	// clicks, drags and the wheel for the dashboard's timeline
	v.MouseMode = tea.MouseModeCellMotion
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
		body = m.Screen().View()
	}
	body = draw.Fit(body, bw, bh)
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
	return draw.Fit(out, w, h)
}

// header is the top line: the program, the screen, and what runs.
func (m *Model) header(w int) string {
	st := m.c.Styles
	sep := " › "
	if m.c.Opts.ASCII {
		sep = " > "
	}
	left := st.Title.Render("gnnscope") + sep + m.Screen().Title()
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
		return draw.Cut(left, w, st.Glyphs.Ellipsis)
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
			return draw.Cut(st.Error.Render(text), w, st.Glyphs.Ellipsis)
		}
		return draw.Cut(st.StatusBar.Render(text), w, st.Glyphs.Ellipsis)
	}
	bindings := m.Screen().ShortHelp()
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
