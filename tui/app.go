package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/compare"
	"github.com/gnnscope/gnnscope/tui/dashboard"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/launch"
	"github.com/gnnscope/gnnscope/tui/newexp"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// StatusTimeout is how long a status message stays in the status bar.
const StatusTimeout = 8 * time.Second

// clearStatusMsg clears the status bar unless a newer message came.
type clearStatusMsg struct{ seq int }

// page is one screen of the back stack with the model it shows.
type page struct {
	screen common.Screen
	form   *newexp.Model
	dash   *dashboard.Model
	dashID string // the session the dashboard shows
	cmp    *compare.Model
}

// close releases what the page holds.
func (p *page) close() {
	if p.dash != nil {
		p.dash.Close()
	}
}

// Model is the workbench's root model.
type Model struct {
	c      *common.Common
	launch launch.Launcher // for the new-experiment form and the L key
	// pages is the back stack; the sessions list is always at the
	// bottom, the screen on display at the top.
	pages []*page
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
	m := &Model{c: c, pages: []*page{{screen: common.ScreenSessions}}, list: sessionlist.New(c)}
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

// top is the page on display.
func (m *Model) top() *page { return m.pages[len(m.pages)-1] }

// Screen returns the screen on display.
func (m *Model) Screen() common.Screen { return m.top().screen }

// Depth returns the number of screens in the back stack, the sessions
// list included.
func (m *Model) Depth() int { return len(m.pages) }

// HelpOpen reports whether the help overlay is open.
func (m *Model) HelpOpen() bool { return m.help }

// Status returns the status bar's message.
func (m *Model) Status() common.StatusMsg { return m.status }

// List returns the sessions list.
func (m *Model) List() *sessionlist.Model { return m.list }

// Close releases what the screens hold (journal tails, replays).
func (m *Model) Close() {
	for _, p := range m.pages {
		p.close()
	}
	m.pages = m.pages[:1]
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
	for _, p := range m.pages {
		switch {
		case p.form != nil:
			p.form.SetSize(w, h)
		case p.dash != nil:
			p.dash.SetSize(w, h)
		case p.cmp != nil:
			p.cmp.SetSize(w, h)
		}
	}
}

// capturing reports whether the screen on display takes every key (a
// form field, a dialog, a confirmation), so q, ? and esc are its own.
func (m *Model) capturing() bool {
	p := m.top()
	switch p.screen {
	case common.ScreenSessions:
		return m.list.Capturing()
	case common.ScreenNew:
		return true
	case common.ScreenCompare:
		return p.cmp.Capturing()
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
	case tea.MouseMsg:
		// the screen on display only, in its own coordinates: the body
		// starts under the header line
		if p := m.top(); !m.help && p.screen == common.ScreenDashboard {
			return m, p.dash.Mouse(msg, 0, 1)
		}
		return m, nil
	case common.OpenDashboardMsg:
		return m, m.openDashboard(msg.Session, msg.Replay)
	case common.OpenCompareMsg:
		cm, err := compare.New(m.c, msg.Refs)
		if err != nil {
			return m, m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
		}
		w, h := m.bodySize()
		cm.SetSize(w, h)
		m.push(&page{screen: common.ScreenCompare, cmp: cm})
		return m, cm.Init()
	case common.OpenNewMsg:
		return m, m.openForm(msg.From)
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
	for _, p := range m.pages {
		switch {
		case p.form != nil:
			p.form, cmd = p.form.Update(msg)
		case p.dash != nil:
			p.dash, cmd = p.dash.Update(msg)
		case p.cmp != nil:
			p.cmp, cmd = p.cmp.Update(msg)
		default:
			continue
		}
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
	p := m.top()
	if !m.capturing() {
		switch {
		case key.Matches(msg, keys.Quit):
			return m.quit()
		case key.Matches(msg, keys.Help):
			m.help, m.helpOffset = true, 0
			return nil
		case key.Matches(msg, keys.Back) && p.screen == common.ScreenDashboard && p.dash.Dismiss():
			return nil // esc closed a span's details first
		case key.Matches(msg, keys.Back) && p.screen != common.ScreenSessions:
			return m.back()
		case key.Matches(msg, keys.Compare) && p.screen == common.ScreenDashboard:
			// compare the runs of the session on display
			id := p.dashID
			return func() tea.Msg { return common.OpenCompareMsg{Refs: []string{id}} }
		}
	}
	var cmd tea.Cmd
	switch p.screen {
	case common.ScreenSessions:
		m.list, cmd = m.list.Update(msg)
	case common.ScreenNew:
		p.form, cmd = p.form.Update(msg)
	case common.ScreenDashboard:
		p.dash, cmd = p.dash.Update(msg)
	case common.ScreenCompare:
		p.cmp, cmd = p.cmp.Update(msg)
	}
	return cmd
}

// quit ends the program; background runs keep running.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// push shows a page over the current one.
func (m *Model) push(p *page) {
	if m.Screen() == common.ScreenSessions {
		m.list.Blur()
	}
	m.pages = append(m.pages, p)
}

// back returns to the previous screen, releasing the one left.
func (m *Model) back() tea.Cmd {
	if len(m.pages) == 1 {
		return nil
	}
	m.top().close()
	m.pages = m.pages[:len(m.pages)-1]
	if m.Screen() == common.ScreenSessions {
		return m.list.Focus()
	}
	return nil
}

// openForm shows the new-experiment form, filled with the experiment of
// session from when it is set; what the form cannot hold goes to the
// status bar.
func (m *Model) openForm(from string) tea.Cmd {
	form := newexp.New(m.c, m.launch)
	var st tea.Cmd
	if from != "" {
		s, err := m.c.Store.MatchSession(from)
		var exp runner.Experiment
		var resolved []runner.Resolved
		if err == nil {
			exp, resolved, err = runner.LoadSession(s)
		}
		if err != nil {
			return m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
		}
		variants := make([]runner.Variant, len(resolved))
		for i, r := range resolved {
			variants[i] = r.Variant
		}
		text := "a copy of " + s.ID() + "'s experiment"
		if notes := form.Prefill(exp, variants); len(notes) > 0 {
			text += "; " + strings.Join(notes, "; ")
		}
		st = m.setStatus(common.StatusMsg{Text: text})
	}
	w, h := m.bodySize()
	form.SetSize(w, h)
	m.push(&page{screen: common.ScreenNew, form: form})
	return tea.Batch(form.Init(), st)
}

// openDashboard shows a session's dashboard.
func (m *Model) openDashboard(id string, replay bool) tea.Cmd {
	d, err := dashboard.New(m.c, id, replay)
	if err != nil {
		return m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
	}
	p := &page{screen: common.ScreenDashboard, dash: d, dashID: id}
	if s, err := m.c.Store.MatchSession(id); err == nil {
		p.dashID = s.ID()
	}
	w, h := m.bodySize()
	d.SetSize(w, h)
	// The form that launched the session is done with.
	if m.Screen() == common.ScreenNew {
		m.pages = m.pages[:len(m.pages)-1]
	}
	m.push(p)
	return d.Init()
}

// launched follows a launch: on success the list picks the session up
// and its dashboard opens; a failure goes to the form (inline) or the
// status bar.
func (m *Model) launched(msg common.LaunchedMsg) tea.Cmd {
	var cmds []tea.Cmd
	if p := m.top(); p.form != nil {
		var cmd tea.Cmd
		p.form, cmd = p.form.Update(msg)
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
	p := m.top()
	switch p.screen {
	case common.ScreenNew:
		return "New experiment"
	case common.ScreenDashboard:
		return p.dash.Title()
	case common.ScreenCompare:
		return p.cmp.Title()
	}
	return "Sessions"
}

// shortHelp lists the keys of the screen on display for the status bar.
func (m *Model) shortHelp() []key.Binding {
	k := m.c.Keys
	p := m.top()
	switch p.screen {
	case common.ScreenSessions:
		return m.list.ShortHelp()
	case common.ScreenNew:
		return p.form.ShortHelp()
	case common.ScreenCompare:
		return p.cmp.ShortHelp()
	case common.ScreenDashboard:
		return []key.Binding{k.NextPane, k.Compare, k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekForward, k.ZoomIn, k.ZoomOut,
			k.PanLeft, k.PanRight, k.Details, k.FirstEpoch, k.LastEpoch, k.Bars, k.Back, k.Help, k.Quit}
	}
	return []key.Binding{k.Back, k.Help, k.Quit}
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
		switch p := m.top(); p.screen {
		case common.ScreenSessions:
			body = m.list.View()
		case common.ScreenNew:
			body = p.form.View()
		case common.ScreenDashboard:
			body = p.dash.View()
		case common.ScreenCompare:
			body = p.cmp.View()
		}
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
