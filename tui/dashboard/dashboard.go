package dashboard

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/overlay"
	"github.com/gnnscope/gnnscope/tui/runstate"
	"github.com/gnnscope/gnnscope/tui/summary"
)

// Model is the Run dashboard of one session.
type Model struct {
	c       *common.Common
	session *sessions.Session
	names   []string // runs, in launch order
	set     *runstate.Set
	replay  *sessions.Replay // nil when live
	live    bool

	id      int64 // tells this dashboard's ticks from another's
	ticking bool
	closed  bool

	width, height int
	focus         int  // focused run (Tab)
	picked        bool // the user picked the focused run (Tab): live focus stays

	table  *summary.Model
	panels []*panel // one per run, so each keeps its own caches
	// the curves: overlay, smoothing, log scale (charts.go)
	charts  charts
	overlay *overlay.Model

	drawn   uint64 // set version the cached frame shows
	frame   string
	dirty   bool // size, focus or a control changed since the frame
	lastPos time.Duration
	// drawnAt is when the frame was drawn; new events or a moving replay
	// redraw it at most once per minGap (user actions at once), however
	// often the root asks for a View.
	drawnAt time.Time
	minGap  time.Duration
	status  string // last control's note or error
	drag    int    // the panel whose timeline is dragged, plus one (0: none)
}

var nextID atomic.Int64

// tickMsg drives redraws; id is the dashboard it belongs to.
type tickMsg struct{ id int64 }

// New opens a session's dashboard. sessionID is an id, a unique prefix or
// "last". Without replay the runs are followed live when any of them is
// running, waiting to be started by the runner, or may be running (its
// writer cannot be checked), and replayed from their journals otherwise,
// starting at the end so the finished state shows at once; replay forces
// a replay from the start.
func New(c *common.Common, sessionID string, replay bool) (*Model, error) {
	if c == nil || c.Store == nil {
		return nil, errors.New("dashboard: no session store")
	}
	sess, err := c.Store.MatchSession(sessionID)
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	// launch order, with runs the runner has yet to start as pending
	states, err := runner.RunStates(sess)
	if err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", sess.ID(), err)
	}
	m := &Model{c: c, session: sess, id: nextID.Add(1), width: c.Width, height: c.Height, dirty: true}
	running := false
	var withJournal []string
	for _, st := range states {
		m.names = append(m.names, st.Run)
		if st.Size > 0 {
			withJournal = append(withJournal, st.Run)
		}
		switch st.Status {
		case profile.StatusRunning, profile.StatusUnknown, profile.StatusPending:
			running = true
		}
	}
	if len(m.names) == 0 {
		return nil, fmt.Errorf("dashboard %s: the session has no runs", sess.ID())
	}
	m.live = running && !replay
	stored := func() {
		for i, name := range m.names {
			if rs, err := sess.RankStarts(name); err == nil && len(rs) > 1 {
				m.set.SetRankStarts(i, rs) // the ranks' nodes, for the timeline's groups
			}
			for _, st := range states {
				if st.Run == name {
					m.set.SetStored(i, st.Status, st.Error)
				}
			}
		}
	}
	if m.live {
		m.set = runstate.NewSet(m.names)
		stored()
		srcs := make([]sessions.Source, len(m.names))
		for i, run := range m.names {
			l, err := sess.Live(run, sessions.TailOptions{})
			if err != nil {
				m.set.Close()
				return nil, fmt.Errorf("dashboard %s: %w", sess.ID(), err)
			}
			srcs[i] = l
		}
		if err := m.set.StartLive(srcs); err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", sess.ID(), err)
		}
		m.setup()
		return m, nil
	}
	if len(withJournal) == 0 {
		return nil, fmt.Errorf("dashboard %s: no run has a journal yet", sess.ID())
	}
	m.names = withJournal
	rp, err := sess.Replay(withJournal, sessions.ReplayOptions{})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if !replay {
		rp.Seek(rp.Duration()) // a finished session opens on its final state
	}
	return m.startReplay(rp, stored)
}

// newReplay builds a dashboard over a replay whose tracks are the runs
// named names (tests drive it with a fake clock).
func newReplay(c *common.Common, names []string, rp *sessions.Replay) (*Model, error) {
	m := &Model{c: c, names: names, id: nextID.Add(1), width: c.Width, height: c.Height, dirty: true}
	return m.startReplay(rp, nil)
}

// newStatic builds a dashboard over a set that the caller feeds with
// Set.Add (benchmarks and tests).
func newStatic(c *common.Common, names []string, live bool) *Model {
	m := &Model{c: c, names: names, live: live, id: nextID.Add(1), width: c.Width, height: c.Height, dirty: true}
	m.set = runstate.NewSet(names)
	m.setup()
	return m
}

// startReplay feeds the dashboard from rp; before, stored (if not nil)
// tells the runs what the session store says of them.
func (m *Model) startReplay(rp *sessions.Replay, stored func()) (*Model, error) {
	m.replay = rp
	m.set = runstate.NewSet(m.names)
	if stored != nil {
		stored()
	}
	m.setup()
	if err := m.set.StartReplay(rp); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return m, nil
}

// Init starts the redraw tick.
func (m *Model) Init() tea.Cmd {
	return m.tick()
}

// frameInterval is 1/MaxFPS (at most 10 frames a second).
func (m *Model) frameInterval() time.Duration {
	fps := m.c.Opts.MaxFPS
	if fps <= 0 || fps > 10 {
		fps = 10
	}
	return time.Second / time.Duration(fps)
}

// tick schedules the next redraw check, once per frame of MaxFPS.
func (m *Model) tick() tea.Cmd {
	if m.closed {
		return nil
	}
	m.ticking = true
	id := m.id
	tick := m.c.Tick
	if tick == nil {
		tick = tea.Tick
	}
	return tick(m.frameInterval(), func(time.Time) tea.Msg { return tickMsg{id: id} })
}

// Update handles the dashboard's keys, the mouse (its coordinates the
// dashboard's own) and its own tick; other messages are ignored (the
// root sets the size with SetSize).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		if msg.id != m.id {
			return nil
		}
		m.ticking = false
		if m.closed {
			return nil
		}
		m.follow()
		if m.needsTick() {
			return m.tick()
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseMsg:
		return m.mouse(msg)
	}
	return nil
}

// follow keeps a live dashboard's focus on the run in progress until the
// user picks a run (Tab): when the focused run is not in progress and
// another is, the first such run takes the focus.
func (m *Model) follow() {
	if !m.live || m.picked {
		return
	}
	m.set.Lock()
	defer m.set.Unlock()
	runs := m.set.Runs()
	inProgress := func(r *runstate.Run) bool { return r.Started && !r.Ended }
	if m.focus < len(runs) && inProgress(runs[m.focus]) {
		return
	}
	for i, r := range runs {
		if inProgress(r) {
			m.focus, m.dirty = i, true
			return
		}
	}
}

// needsTick reports whether redraw checks must go on: events may still
// come, or a replay's position moves.
func (m *Model) needsTick() bool {
	if m.set.Active() || m.set.Version() != m.drawn {
		return true
	}
	return m.replay != nil && !m.replay.Paused() && m.replay.Position() < m.replay.Duration()
}

// key handles a key press; it restarts the tick when the key may bring
// new events (a replay control).
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.chartKey(msg) {
		return nil
	}
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Back):
		if m.Dismiss() {
			return nil // esc closed a span's details first
		}
		return common.Back
	case key.Matches(msg, k.Compare) && m.session != nil:
		// compare the runs of the session on display
		id := m.session.ID()
		return func() tea.Msg { return common.OpenCompareMsg{Refs: []string{id}} }
	case key.Matches(msg, k.NextPane):
		if len(m.names) > 1 {
			m.focus = (m.focus + 1) % len(m.names)
			m.dirty, m.picked = true, true
		}
		return nil
	case key.Matches(msg, k.ZoomIn), key.Matches(msg, k.ZoomOut):
		m.set.Lock()
		runs := m.set.Runs()
		for i, p := range m.panels {
			if i < len(runs) {
				p.timeline.Sync(runs[i])
			}
			if key.Matches(msg, k.ZoomIn) {
				p.timeline.ZoomIn()
			} else {
				p.timeline.ZoomOut()
			}
		}
		m.set.Unlock()
		m.dirty = true
		return nil
	}
	if m.timelineKey(msg) {
		return nil
	}
	if m.replay == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Pause):
		if m.replay.Paused() {
			m.replay.Resume()
		} else {
			m.replay.Pause()
		}
	case key.Matches(msg, k.Faster):
		m.setSpeed(m.replay.Speed() * 2)
	case key.Matches(msg, k.Slower):
		m.setSpeed(m.replay.Speed() / 2)
	case key.Matches(msg, k.SeekBack):
		m.replay.Seek(m.replay.Position() - m.replay.Duration()/10)
	case key.Matches(msg, k.SeekForward):
		m.replay.Seek(m.replay.Position() + m.replay.Duration()/10)
	default:
		return nil
	}
	m.set.Poke()
	m.dirty = true
	if !m.ticking {
		return m.tick()
	}
	return nil
}

// Replay speeds are kept within these bounds.
const (
	minSpeed = 1.0 / 16
	maxSpeed = 1024.0
)

func (m *Model) setSpeed(f float64) {
	f = min(max(f, minSpeed), maxSpeed)
	if err := m.replay.SetSpeed(f); err != nil {
		m.status = err.Error()
	}
}

// SetSize sets the area the dashboard draws in.
func (m *Model) SetSize(w, h int) {
	if w != m.width || h != m.height {
		m.width, m.height = w, h
		m.dirty = true
	}
}

// Title names the screen: the session id, and whether it is live or a
// replay.
func (m *Model) Title() string {
	id := ""
	if m.session != nil {
		id = m.session.ID()
	}
	if m.live {
		return "Run " + id + " (live)"
	}
	return "Run " + id + " (replay)"
}

// Capturing reports that the dashboard takes no text: q and ? stay the
// workbench's.
func (m *Model) Capturing() bool { return false }

// ShortHelp lists the keys the status bar shows for this screen.
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.Keys
	return []key.Binding{k.NextPane, k.Compare, k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekForward, k.ZoomIn, k.ZoomOut,
		k.PanLeft, k.PanRight, k.Details, k.FirstEpoch, k.LastEpoch, k.Bars, k.Back, k.Help, k.Quit}
}

// Close stops the tails or the replay. The model draws its last state
// afterwards but no longer changes.
func (m *Model) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if err := m.set.Close(); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// View renders the dashboard: from cache unless events arrived or a
// playing replay moved (then at most MaxFPS times a second), or the size,
// focus or a control changed (at once).
func (m *Model) View() string {
	v := m.set.Version()
	var pos time.Duration
	if m.replay != nil {
		pos = m.replay.Position()
	}
	if m.frame != "" && !m.dirty {
		if v == m.drawn && pos == m.lastPos {
			return m.frame
		}
		if time.Since(m.drawnAt) < m.minGap {
			return m.frame
		}
	}
	m.set.Lock()
	m.frame = m.render()
	m.set.Unlock()
	m.drawn, m.lastPos, m.dirty, m.drawnAt = v, pos, false, time.Now()
	return m.frame
}
