package sessionlist

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
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
	stale   bool // the sessions folder changed during the poll under way

	watch  *watcher // the sessions folder's watch (Watch), or nil
	poller *poller

	confirm *confirmation
	export  exporter.Slot
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

// Close ends the journal tails and the watch of the sessions folder.
func (m *Model) Close() error {
	m.poller.close()
	if m.watch != nil {
		m.watch.close()
	}
	return nil
}

// Title names the screen.
func (m *Model) Title() string { return "Sessions" }

// Watch starts watching the sessions folder, so that sessions created
// elsewhere (another shell's gnnscope run, an import) appear within a
// second, and returns the command that waits for the first change. The
// workbench calls it once; tests drive the list without it.
func (m *Model) Watch() tea.Cmd {
	if m.watch == nil {
		m.watch = newWatcher(m.c.Store.SessionsDir())
	}
	return m.watch.wait
}

func (m *Model) pollCmd() tea.Cmd {
	prev := make(map[string]Entry, len(m.entries))
	for _, e := range m.entries {
		prev[e.ID] = e
	}
	p := m.poller
	return func() tea.Msg { return polledMsg{p.poll(prev)} }
}

// anyRunning reports whether a session is running or starting (its
// session.json not read yet).
func (m *Model) anyRunning() bool {
	for i := range m.entries {
		if m.entries[i].Running() || m.entries[i].Starting() {
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
func (m *Model) Capturing() bool { return m.confirm != nil || m.export.IsOpen() }

// SetSize sets the area the list draws in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.export.SetWidth(w)
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
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.export.Update(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case loadedMsg:
		m.loaded = true
		m.loadErr = ""
		if msg.err != nil {
			m.loadErr = msg.err.Error()
		}
		m.setEntries(msg.entries)
		m.loads++
		return tea.Batch(m.next(), m.describeNext())
	case describedMsg:
		if msg.load != m.loads {
			return nil
		}
		for i := range m.entries {
			if m.entries[i].ID == msg.entry.ID && m.entries[i].Partial {
				m.entries[i] = msg.entry
			}
		}
		m.setEntries(m.entries)
		return tea.Batch(m.next(), m.describeNext())
	case tickMsg:
		m.ticking = false
		return m.Poll()
	case polledMsg:
		m.polling = false
		m.merge(msg.res)
		if m.stale { // the folder changed during the poll
			m.stale = false
			return m.Poll()
		}
		return m.next()
	case changedMsg:
		if m.polling {
			m.stale = true
			return m.watch.wait
		}
		return tea.Batch(m.Poll(), m.watch.wait)
	case actionMsg:
		st := common.StatusMsg{Text: msg.text}
		if msg.err != nil {
			st = common.StatusMsg{Text: msg.err.Error(), Err: true}
		}
		return tea.Batch(status(st), m.load())
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
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

// ShortHelp lists the keys the status bar shows for this screen.
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.Keys
	if m.confirm != nil {
		return []key.Binding{k.Confirm, key.NewBinding(key.WithHelp("n", "no"))}
	}
	if m.export.IsOpen() {
		return nil
	}
	return []key.Binding{k.Open, k.Launch, k.NewExperiment, k.Select, k.Compare, k.Replay, k.Export, k.Delete, k.Cancel, k.Help, k.Quit}
}
