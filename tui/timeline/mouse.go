package timeline

import "github.com/gnnscope/gnnscope/tui/runstate"

// drag is a press of the left button on the cells, panning while the
// pointer moves.
type drag struct {
	on bool
	x  int   // where it began
	t0 int64 // the window's start then
}

// cellAt returns the lane row and cell at column x, line y of the last
// drawing (0, 0 its top left corner), if they hold a cell.
func (m *Model) cellAt(x, y int) (row, cell int, ok bool) {
	g := m.geo
	row, cell = y-g.y0, x-g.x0
	if m.bars || g.pw <= 0 || row < 0 || row >= len(g.rows) || cell < 0 || cell >= g.pw {
		return 0, 0, false
	}
	return row, cell, true
}

// cellTime is the middle of a cell of the last drawing.
func (m *Model) cellTime(cell int) int64 {
	g := m.geo
	return g.t0 + (2*int64(cell)+1)*(g.t1-g.t0)/(2*int64(g.pw))
}

// Click puts the cursor on the cell at column x, line y (0, 0: the
// drawing's top left), selects the span under it (clicking the selected
// span again unselects it) and starts a drag. It reports whether (x, y)
// is on the cells.
func (m *Model) Click(r *runstate.Run, x, y int) bool {
	row, cell, ok := m.cellAt(x, y)
	if !ok {
		return false
	}
	m.hasCur, m.cur, m.lane = true, m.cellTime(cell), m.geo.top+row
	m.drag = drag{on: true, x: x, t0: m.geo.t0}
	m.SelectAtCursor(r)
	return true
}

// Drag pans the window with the pointer, at column x, while the button
// pressed by Click is held; it reports whether the window moved.
func (m *Model) Drag(x int) bool {
	g := m.geo
	if !m.drag.on || g.pw <= 0 || m.end <= m.first {
		return false
	}
	L := g.t1 - g.t0
	if L >= m.end-m.first {
		return false // the whole run shows: nothing to pan
	}
	t0 := m.drag.t0 - int64(x-m.drag.x)*L/int64(g.pw)
	t0 = min(max(t0, m.first), m.end-L)
	if t0 == g.t0 {
		return false
	}
	m.place(t0, L)
	return true
}

// Release ends a drag.
func (m *Model) Release() { m.drag.on = false }

// Wheel zooms in (in) or out around the cell at column x, line y: the
// cursor goes there and keeps its column. It reports whether (x, y) is
// on the cells.
func (m *Model) Wheel(x, y int, in bool) bool {
	row, cell, ok := m.cellAt(x, y)
	if !ok {
		return false
	}
	m.hasCur, m.cur, m.lane = true, m.cellTime(cell), m.geo.top+row
	if in {
		m.ZoomIn()
	} else {
		m.ZoomOut()
	}
	return true
}
