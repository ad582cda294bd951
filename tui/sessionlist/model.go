package sessionlist

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/exporter"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// PollInterval is how often the list polls while a session is running.
const PollInterval = time.Second

// Messages of the list's own commands.
type (
	loadedMsg struct {
		entries []Entry
		err     error
	}
	tickMsg   struct{}
	polledMsg struct{ res pollResult }
	// describedMsg brings the figures of one session of a load.
	describedMsg struct {
		load  int
		entry Entry
	}
	// actionMsg reports a delete or cancel.
	actionMsg struct {
		text string
		err  error
	}
)

// confirmation is a pending y/n question.
type confirmation struct {
	prompt string
	action func() tea.Msg
}

// row is one line of the list: a session, or one of its runs (when the
// session is expanded).
type row struct {
	entry int
	run   int // -1: the session itself
}

// Model is the sessions list.
type Model struct {
	// Launch starts the default experiment (the L key).
	Launch launch.Launcher

	c        *common.Common
	entries  []Entry
	rows     []row
	expanded map[string]bool // session ids
	selected map[string]bool // "ID" or "ID/RUN"
	cursor   int
	offset   int
	width    int
	height   int

	want    string // session to put the cursor on once listed
	loads   int    // loads so far: describedMsg of older ones are dropped
	loaded  bool
	loadErr string
	focused bool
	polling bool // a poll is under way
	ticking bool // the next poll's tick is scheduled
	poller  *poller

	confirm *confirmation
	export  *exporter.Model
}

// New returns the list of c's store; Init loads it.
func New(c *common.Common) *Model {
	return &Model{c: c, expanded: map[string]bool{}, selected: map[string]bool{}, focused: true, poller: newPoller(c.Store)}
}

// Init loads the sessions.
func (m *Model) Init() tea.Cmd { return m.load() }

func (m *Model) load() tea.Cmd {
	store := m.c.Store
	return func() tea.Msg {
		entries, err := glanceAll(store)
		return loadedMsg{entries, err}
	}
}

// describeNext reads the figures of the first session (in list order)
// that has none yet, so a large store shows at once and fills in.
func (m *Model) describeNext() tea.Cmd {
	for _, e := range m.entries {
		if e.Partial {
			store, id, load := m.c.Store, e.ID, m.loads
			return func() tea.Msg { return describedMsg{load, describe(store, id)} }
		}
	}
	return nil
}

// Reload reads every session again (after a change made elsewhere).
func (m *Model) Reload() tea.Cmd { return m.load() }

// Focus tells the list it is on screen again: it polls at once (new
// sessions, running ones) and keeps polling while something runs.
func (m *Model) Focus() tea.Cmd {
	m.focused = true
	return m.Poll()
}

// Poll looks for new sessions and updates the running ones now, unless a
// poll is already under way.
func (m *Model) Poll() tea.Cmd {
	if m.polling || !m.loaded {
		return nil
	}
	m.polling = true
	return m.pollCmd()
}

// Blur tells the list it is hidden. It goes on polling running sessions
// (the header counts them), but no longer polls at once on focus changes.
func (m *Model) Blur() { m.focused = false }

// Select puts the cursor on a session as soon as the list has it (a
// session just launched).
func (m *Model) Select(id string) {
	m.want = id
	m.setEntries(m.entries)
}

// Close ends the journal tails.
func (m *Model) Close() { m.poller.close() }

func (m *Model) pollCmd() tea.Cmd {
	prev := make(map[string]Entry, len(m.entries))
	for _, e := range m.entries {
		prev[e.ID] = e
	}
	p := m.poller
	return func() tea.Msg { return polledMsg{p.poll(prev)} }
}

// anyRunning reports whether a session is running.
func (m *Model) anyRunning() bool {
	for i := range m.entries {
		if m.entries[i].Running() {
			return true
		}
	}
	return false
}

// Live reports whether the list is polling a running session.
func (m *Model) Live() bool { return m.anyRunning() }

// Entries returns the sessions shown, newest first.
func (m *Model) Entries() []Entry { return m.entries }

// Selected returns the selected references ("ID" or "ID/RUN") in list
// order.
func (m *Model) Selected() []string {
	var out []string
	for _, r := range m.rows {
		if ref := m.ref(r); m.selected[ref] {
			out = append(out, ref)
		}
	}
	return out
}

// Capturing reports whether the list takes every key (a confirmation or
// the export dialog is open), so the root must not act on q, ? or esc.
func (m *Model) Capturing() bool { return m.confirm != nil || m.export != nil }

// SetSize sets the area the list draws in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	if m.export != nil {
		m.export.SetWidth(w)
	}
	m.scroll()
}

// next schedules the next poll while a session is running.
func (m *Model) next() tea.Cmd {
	if m.anyRunning() && !m.ticking && !m.polling {
		m.ticking = true
		return m.c.Tick(PollInterval, func(time.Time) tea.Msg { return tickMsg{} })
	}
	return nil
}

// setEntries replaces the entries, keeping the cursor on the same row.
func (m *Model) setEntries(entries []Entry) {
	var keep string
	if m.cursor < len(m.rows) {
		keep = m.ref(m.rows[m.cursor])
	}
	m.entries = entries
	ids := map[string]bool{}
	for _, e := range entries {
		ids[e.ID] = true
	}
	for ref := range m.selected {
		id, _ := sessions.ParseRunRef(ref)
		if !ids[id] {
			delete(m.selected, ref)
		}
	}
	m.buildRows()
	m.cursor = min(m.cursor, max(len(m.rows)-1, 0))
	for i, r := range m.rows {
		if m.ref(r) == keep {
			m.cursor = i
		}
	}
	if m.want != "" {
		for i, r := range m.rows {
			if r.run < 0 && m.entries[r.entry].ID == m.want {
				m.cursor, m.want = i, ""
			}
		}
	}
	m.scroll()
}

func (m *Model) buildRows() {
	m.rows = m.rows[:0]
	for i, e := range m.entries {
		m.rows = append(m.rows, row{entry: i, run: -1})
		if m.expanded[e.ID] {
			for j := range e.Runs {
				m.rows = append(m.rows, row{entry: i, run: j})
			}
		}
	}
}

// ref is the reference of a row: "ID" or "ID/RUN".
func (m *Model) ref(r row) string {
	e := &m.entries[r.entry]
	if r.run < 0 {
		return e.ID
	}
	return e.ID + "/" + e.Runs[r.run].Name
}

// current returns the entry under the cursor (nil when the list is empty).
func (m *Model) current() (*Entry, row) {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil, row{}
	}
	r := m.rows[m.cursor]
	return &m.entries[r.entry], r
}

// Update handles messages.
func (m *Model) Update(msg tea.Msg) (*Model, tea.Cmd) {
	switch msg := msg.(type) {
	case loadedMsg:
		m.loaded = true
		m.loadErr = ""
		if msg.err != nil {
			m.loadErr = msg.err.Error()
		}
		m.setEntries(msg.entries)
		m.loads++
		return m, tea.Batch(m.next(), m.describeNext())
	case describedMsg:
		if msg.load != m.loads {
			return m, nil
		}
		for i := range m.entries {
			if m.entries[i].ID == msg.entry.ID && m.entries[i].Partial {
				m.entries[i] = msg.entry
			}
		}
		m.setEntries(m.entries)
		return m, tea.Batch(m.next(), m.describeNext())
	case tickMsg:
		m.ticking = false
		return m, m.Poll()
	case polledMsg:
		m.polling = false
		m.merge(msg.res)
		return m, m.next()
	case actionMsg:
		st := common.StatusMsg{Text: msg.text}
		if msg.err != nil {
			st = common.StatusMsg{Text: msg.err.Error(), Err: true}
		}
		return m, tea.Batch(status(st), m.load())
	case exporter.DoneMsg:
		if m.export == nil {
			return m, nil
		}
		open, st := m.export.Done(msg)
		if open {
			return m, nil
		}
		m.export = nil
		return m, status(st)
	case exporter.ClosedMsg:
		m.export = nil
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func status(st common.StatusMsg) tea.Cmd { return func() tea.Msg { return st } }

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// merge applies a poll's result.
func (m *Model) merge(res pollResult) {
	if res.err != nil {
		m.loadErr = res.err.Error()
		return
	}
	old := make(map[string]Entry, len(m.entries))
	for _, e := range m.entries {
		old[e.ID] = e
	}
	entries := make([]Entry, 0, len(res.ids))
	for _, id := range res.ids {
		if e, ok := res.updated[id]; ok {
			entries = append(entries, e)
		} else if e, ok := old[id]; ok {
			entries = append(entries, e)
		}
	}
	m.setEntries(entries)
}

func (m *Model) key(msg tea.KeyPressMsg) (*Model, tea.Cmd) {
	if m.export != nil {
		var cmd tea.Cmd
		m.export, cmd = m.export.Update(msg)
		return m, cmd
	}
	keys := m.c.Keys
	if m.confirm != nil {
		c := m.confirm
		switch {
		case key.Matches(msg, keys.Confirm):
			m.confirm = nil
			return m, c.action
		case msg.String() == "n" || msg.String() == "esc" || key.Matches(msg, keys.Back):
			m.confirm = nil
			return m, status(common.StatusMsg{Text: "nothing done"})
		}
		return m, nil // only y or n
	}
	e, r := m.current()
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
		return m, send(common.OpenNewMsg{})
	case key.Matches(msg, keys.Launch):
		exp, variants := launch.DefaultExperiment()
		return m, m.Launch.Cmd(exp, variants, nil)
	case key.Matches(msg, keys.Refresh):
		return m, tea.Batch(status(common.StatusMsg{Text: "reloading sessions"}), m.load())
	}
	if e == nil {
		return m, nil
	}
	switch {
	case key.Matches(msg, keys.Right):
		if !m.expanded[e.ID] && len(e.Runs) > 0 {
			m.expanded[e.ID] = true
			m.buildRows()
		}
	case key.Matches(msg, keys.Left):
		if m.expanded[e.ID] {
			delete(m.expanded, e.ID)
			m.buildRows()
			for i, rr := range m.rows {
				if rr.entry == r.entry && rr.run < 0 {
					m.cursor = i
				}
			}
			m.scroll()
		}
	case key.Matches(msg, keys.Select):
		ref := m.ref(r)
		if m.selected[ref] {
			delete(m.selected, ref)
		} else {
			m.selected[ref] = true
		}
		m.move(1)
	case key.Matches(msg, keys.Open):
		return m, send(common.OpenDashboardMsg{Session: e.ID})
	case key.Matches(msg, keys.Replay):
		return m, send(common.OpenDashboardMsg{Session: e.ID, Replay: true})
	case key.Matches(msg, keys.Compare):
		refs := m.Selected()
		if len(refs) == 0 {
			refs = []string{m.ref(r)}
		}
		return m, send(common.OpenCompareMsg{Refs: refs})
	case key.Matches(msg, keys.Export):
		return m, m.openExport(m.ref(r))
	case key.Matches(msg, keys.Delete):
		if e.Running() {
			return m, status(common.StatusMsg{Text: fmt.Sprintf("session %s is running: cancel it first (K)", e.ID), Err: true})
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
	case key.Matches(msg, keys.Cancel):
		if !e.Running() {
			return m, status(common.StatusMsg{Text: fmt.Sprintf("session %s is not running", e.ID), Err: true})
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
	}
	return m, nil
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
	m.export = exporter.New(m.c, t)
	m.export.SetWidth(m.width)
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

// ShortHelp lists the keys the status bar shows for this screen.
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.Keys
	if m.confirm != nil {
		return []key.Binding{k.Confirm, key.NewBinding(key.WithHelp("n", "no"))}
	}
	if m.export != nil {
		return nil
	}
	return []key.Binding{k.Open, k.Launch, k.NewExperiment, k.Select, k.Compare, k.Replay, k.Export, k.Delete, k.Cancel, k.Help, k.Quit}
}

// footer is what goes below the list: the export dialog, a confirmation,
// or the details of the session under the cursor.
func (m *Model) footer() string {
	st := m.c.Styles
	switch {
	case m.export != nil:
		return m.export.View()
	case m.confirm != nil:
		return st.Warn.Render(m.confirm.prompt)
	}
	e, r := m.current()
	if e == nil {
		return ""
	}
	var lines []string
	head := st.Header.Render(e.ID)
	if e.Name != "" {
		head += "  " + e.Name
	}
	if dir := m.c.Store.Root(); dir != "" {
		head += "  " + st.Muted.Render(sessionsDir(m.c.Store, e.ID))
	}
	lines = append(lines, head)
	var runs []string
	for _, run := range e.Runs {
		runs = append(runs, run.Name+" "+m.statusText(run.Status, &run))
	}
	if len(runs) > 0 {
		lines = append(lines, "runs: "+strings.Join(runs, "  "))
	}
	errText := e.Err
	if r.run >= 0 && e.Runs[r.run].Error != "" {
		errText = e.Runs[r.run].Name + ": " + e.Runs[r.run].Error
	} else if errText == "" {
		for _, run := range e.Runs {
			if run.Error != "" {
				errText = run.Name + ": " + run.Error
				break
			}
		}
	}
	if errText != "" {
		lines = append(lines, st.Error.Render(errText))
	}
	if n := len(m.Selected()); n > 0 {
		lines = append(lines, fmt.Sprintf("%d selected: c compares them, x exports them", n))
	}
	return strings.Join(lines, "\n")
}

func sessionsDir(store *sessions.Store, id string) string {
	return filepath.Join(store.Root(), "sessions", id)
}

// statusText is a run's status, with the epoch progress of a running run
// ("running 12/50").
func (m *Model) statusText(status string, r *Run) string {
	text := status
	if status == sessions.StatusRunning && r != nil && r.Epochs > 0 {
		text = fmt.Sprintf("running %d/%d", r.Epoch, r.Epochs)
	}
	return m.statusStyle(status).Render(text)
}

// sessionStatusText is a session's status in the list's narrow column,
// with the running run's progress in percent ("running 24%").
func (m *Model) sessionStatusText(status string, r *Run) string {
	text := status
	if status == sessions.StatusRunning && r != nil && r.Epochs > 0 {
		text = fmt.Sprintf("running %d%%", min(100*r.Epoch/r.Epochs, 100))
	}
	return m.statusStyle(status).Render(text)
}

func (m *Model) statusStyle(status string) lipgloss.Style {
	st := m.c.Styles
	switch status {
	case profile.StatusOK:
		return st.OK
	case sessions.StatusRunning, runner.StatusPending:
		return st.Warn
	case profile.StatusCanceled, runner.StatusEmpty, sessions.StatusUnknown:
		return st.Muted
	}
	return st.Error
}

// progress is the running run's progress of a session ("" if none).
func progress(e *Entry) *Run {
	for i := range e.Runs {
		if e.Runs[i].Status == sessions.StatusRunning {
			return &e.Runs[i]
		}
	}
	return nil
}

// listHeight is the number of rows the list shows.
func (m *Model) listHeight() int {
	return max(m.height-1-common.Lines(m.footer())-1, 1)
}

// column is one column of the list.
type column struct {
	title string
	width int
	prio  int // lower stays longer as the terminal narrows
	right bool
	cell  func(e *Entry) string
}

func (m *Model) columns() []column {
	sec := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		switch {
		case v >= 1000:
			return fmt.Sprintf("%.0f", v)
		case v >= 100:
			return fmt.Sprintf("%.1f", v)
		}
		return fmt.Sprintf("%.3f", v)
	}
	acc := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	// figures not read yet show as an ellipsis
	partial := func(f func(e *Entry) string) func(e *Entry) string {
		return func(e *Entry) string {
			if e.Partial {
				return m.c.Styles.Glyphs.Ellipsis
			}
			return f(e)
		}
	}
	return []column{
		{"ID", 20, 0, false, func(e *Entry) string { return e.ID }},
		{"CREATED", 11, 9, false, func(e *Entry) string {
			if e.Created.IsZero() {
				return "-"
			}
			return e.Created.Local().Format("01-02 15:04")
		}},
		{"STATUS", 13, 1, false, func(e *Entry) string {
			s := e.Status
			if e.Imported {
				s += "*"
			}
			return m.sessionStatusText(s, progress(e))
		}},
		{"DATA", 10, 3, false, func(e *Entry) string { return dash(e.Data) }},
		{"MODEL", 5, 4, false, func(e *Entry) string { return dash(e.Model) }},
		{"VARIANTS", 18, 8, false, func(e *Entry) string { return dash(strings.Join(e.Variants, ",")) }},
		{"BASE s", 6, 5, true, partial(func(e *Entry) string { return sec(e.BaseEpochS) })},
		{"BEST s", 6, 7, true, partial(func(e *Entry) string { return sec(e.BestEpochS) })},
		{"SPEEDUP", 7, 2, true, partial(func(e *Entry) string {
			if e.Speedup <= 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", e.Speedup)
		})},
		{"TEST ACC", 8, 6, true, partial(func(e *Entry) string {
			if e.Best != "" {
				return acc(e.BestAcc)
			}
			return acc(e.BaseAcc)
		})},
	}
}

// fitColumns keeps the columns that fit in w cells, dropping the least
// important first, in display order.
func fitColumns(cols []column, w int) []column {
	order := slices.Clone(cols)
	slices.SortStableFunc(order, func(a, b column) int { return a.prio - b.prio })
	keep := map[string]bool{}
	used := 0
	for _, c := range order {
		need := c.width
		if used > 0 {
			need++
		}
		if used+need > w && used > 0 {
			continue
		}
		keep[c.title] = true
		used += need
	}
	var out []column
	for _, c := range cols {
		if keep[c.title] {
			out = append(out, c)
		}
	}
	return out
}

// View renders the list in its area.
func (m *Model) View() string {
	st := m.c.Styles
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if !m.loaded {
		return draw.Fit(st.Muted.Render("reading sessions from "+m.c.Store.Root()+"..."), w, h)
	}
	if len(m.entries) == 0 {
		msg := []string{
			st.Title.Render("No sessions yet") + " in " + m.c.Store.Root(),
			"",
			"L  launch the default experiment: " + launch.DefaultModel + " on " + launch.DefaultData + ", baseline against optimized",
			"n  set up a new experiment",
			"",
			st.Muted.Render("Runs started here keep running when you quit; the list finds them again."),
		}
		if m.loadErr != "" {
			msg = append(msg, st.Error.Render(m.loadErr))
		}
		return draw.Fit(strings.Join(msg, "\n"), w, h)
	}
	const prefix = 3 // cursor, selection mark, space
	cols := fitColumns(m.columns(), w-prefix)
	var b strings.Builder
	hdr := strings.Repeat(" ", prefix)
	for i, c := range cols {
		if i > 0 {
			hdr += " "
		}
		if c.right {
			hdr += draw.PadLeft(c.title, c.width)
		} else {
			hdr += draw.PadRight(c.title, c.width)
		}
	}
	b.WriteString(st.Header.Render(strings.TrimRight(hdr, " ")))
	lh := m.listHeight()
	for i := m.offset; i < len(m.rows) && i < m.offset+lh; i++ {
		b.WriteString("\n")
		b.WriteString(m.renderRow(i, cols, w))
	}
	foot := m.footer()
	if foot != "" {
		for i := len(m.rows) - m.offset; i < lh; i++ {
			b.WriteString("\n")
		}
		b.WriteString("\n\n")
		b.WriteString(draw.Fit(foot, w, max(h-2-lh, 0)))
	}
	return draw.Fit(b.String(), w, h)
}

func (m *Model) renderRow(i int, cols []column, w int) string {
	st := m.c.Styles
	r := m.rows[i]
	e := &m.entries[r.entry]
	cur, mark := " ", " "
	if i == m.cursor {
		cur = st.Glyphs.Cursor
	}
	if m.selected[m.ref(r)] {
		mark = "*"
	}
	line := cur + mark + " "
	if r.run < 0 {
		for j, c := range cols {
			if j > 0 {
				line += " "
			}
			cell := draw.Cut(c.cell(e), c.width, st.Glyphs.Ellipsis)
			if c.right {
				cell = draw.PadLeft(cell, c.width)
			} else {
				cell = draw.PadRight(cell, c.width)
			}
			line += cell
		}
	} else {
		run := &e.Runs[r.run]
		branch := "├ "
		if st.Glyphs.Cursor == ">" {
			branch = "|-"
		}
		if r.run == len(e.Runs)-1 {
			branch = "└ "
			if st.Glyphs.Cursor == ">" {
				branch = "`-"
			}
		}
		parts := []string{"  " + branch + draw.PadRight(run.Name, 16), draw.PadRight(m.statusText(run.Status, run), 18)}
		if run.EpochS > 0 {
			parts = append(parts, fmt.Sprintf("epoch %.3f s", run.EpochS))
		}
		if run.Speedup > 0 {
			parts = append(parts, fmt.Sprintf("%.2fx", run.Speedup))
		}
		if run.TestAcc != nil {
			parts = append(parts, fmt.Sprintf("test acc %.4f", *run.TestAcc))
		}
		line += strings.Join(parts, " ")
	}
	line = strings.TrimRight(line, " ")
	if i == m.cursor {
		line = st.Selected.Render(draw.PadRight(ansi.Strip(line), w))
	}
	return draw.Cut(line, w, "")
}
