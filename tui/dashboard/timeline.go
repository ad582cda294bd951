package dashboard

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/timeline"
)

// focused returns the focused run's timeline and index, if there is one.
func (m *Model) focused() (*timeline.Model, int, bool) {
	if m.focus < 0 || m.focus >= len(m.panels) {
		return nil, 0, false
	}
	return m.panels[m.focus].timeline, m.focus, true
}

// timelineKey handles the keys of the focused run's timeline: pan,
// cursor, lane, epoch jumps, details and bars; on a live dashboard the
// focus then stays on that run (as after Tab). It reports whether the
// key was one of them.
func (m *Model) timelineKey(msg tea.KeyPressMsg) bool {
	k := m.c.Keys
	tl, i, ok := m.focused()
	if !ok {
		return false
	}
	m.set.Lock()
	defer m.set.Unlock()
	runs := m.set.Runs()
	if i >= len(runs) {
		return false
	}
	r := runs[i]
	tl.Sync(r)
	note := m.status
	m.status = "" // a timeline key's note replaces the last one
	switch {
	case key.Matches(msg, k.PanLeft):
		tl.Pan(-1)
	case key.Matches(msg, k.PanRight):
		tl.Pan(1)
	case key.Matches(msg, k.CursorLeft):
		tl.MoveCursor(-1)
	case key.Matches(msg, k.CursorRight):
		tl.MoveCursor(1)
	case key.Matches(msg, k.LaneUp):
		tl.MoveLane(-1)
	case key.Matches(msg, k.LaneDown):
		tl.MoveLane(1)
	case key.Matches(msg, k.Details):
		if tl.Bars() {
			return false
		}
		// enter closes open details wherever the cursor is (a live
		// window may have moved past it), as their footer says
		if tl.Unselect() {
			break
		}
		if !tl.SelectAtCursor(r) {
			m.status = "no span under the cursor"
		}
	case key.Matches(msg, k.EpochDigits):
		d, _ := strconv.Atoi(msg.String())
		tl.Digit(d)
	case key.Matches(msg, k.FirstEpoch), key.Matches(msg, k.LastEpoch):
		if _, ok := tl.Jump(r, key.Matches(msg, k.LastEpoch)); !ok {
			m.status = "no epoch yet"
		}
	case key.Matches(msg, k.Bars):
		tl.ToggleBars()
	case key.Matches(msg, k.Fold), key.Matches(msg, k.FoldNode):
		if !tl.Fold(key.Matches(msg, k.FoldNode)) {
			m.status = "no rank or node at the cursor"
		}
	default:
		m.status = note
		return false
	}
	// the user is looking into this run: a live dashboard stays on it
	m.dirty, m.picked = true, true
	return true
}

// Dismiss closes what esc closes on the dashboard before it goes back: a
// span's details, or an epoch number being typed. It reports whether
// there was one.
func (m *Model) Dismiss() bool {
	tl, _, ok := m.focused()
	if !ok {
		return false
	}
	if tl.CancelTyped() || tl.Unselect() {
		m.status = ""
		m.dirty = true
		return true
	}
	return false
}

// mouse handles the mouse over the timelines, in the dashboard's own
// coordinates: the wheel zooms around the pointer, a click puts the
// cursor under it, focuses its run (for good, as Tab does) and selects
// the span there, a drag pans.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	ev := msg.Mouse()
	x, y := ev.X, ev.Y
	if _, ok := msg.(tea.MouseMotionMsg); ok {
		if d := m.drag - 1; d >= 0 && d < len(m.panels) {
			p := m.panels[d]
			if p.timeline.Drag(x - p.tlX) {
				m.dirty = true
			}
		}
		return nil
	}
	if _, ok := msg.(tea.MouseReleaseMsg); ok {
		if d := m.drag - 1; d >= 0 && d < len(m.panels) {
			m.panels[d].timeline.Release()
		}
		m.drag = 0
		return nil
	}
	i, p := m.panelAt(x, y)
	if p == nil {
		return nil
	}
	m.set.Lock()
	defer m.set.Unlock()
	runs := m.set.Runs()
	if i >= len(runs) {
		return nil
	}
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.dirty = p.timeline.Wheel(x-p.tlX, y-p.tlY, true) || m.dirty
		case tea.MouseWheelDown:
			m.dirty = p.timeline.Wheel(x-p.tlX, y-p.tlY, false) || m.dirty
		}
	case tea.MouseClickMsg:
		if msg.Button != tea.MouseLeft || !p.timeline.Click(runs[i], x-p.tlX, y-p.tlY) {
			return nil
		}
		m.drag, m.dirty, m.focus, m.picked = i+1, true, i, true
	}
	return nil
}

// panelAt returns the panel whose timeline was drawn at (x, y) of the
// last frame, and its index.
func (m *Model) panelAt(x, y int) (int, *panel) {
	for i, p := range m.panels {
		if p.tlW > 0 && x >= p.tlX && x < p.tlX+p.tlW && y >= p.tlY && y < p.tlY+p.tlH {
			return i, p
		}
	}
	return -1, nil
}
