package timeline

import (
	"strconv"

	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// view is what the user moved: the window, the cursor, the selected span
// and the mode. Every change bumps gen, the drawing cache's key.
type view struct {
	win    int64 // window length in ns; 0: the whole run
	follow bool  // the window ends at the run's latest span end
	start  int64 // the window's start when it does not follow

	hasCur bool  // the cursor shows (after the first move, click or jump)
	cur    int64 // the cursor's time on the run's clock
	lane   int   // the cursor's lane row (of every row, on display or not)

	sel   int  // selected span (its index in the run's spans), -1: none
	bars  bool // per-epoch bars in place of the timeline
	count int  // epoch number typed so far (digits), -1: none
	drag  drag
	// barOff is how many epochs the bars are scrolled up from the last
	barOff int

	gen int

	first, end int64 // the run's extent at the last drawing
}

// geometry is where the last drawing put the lanes, for the mouse and the
// cursor: lane rows from line y0, cells from column x0, pw of them
// covering [t0, t1).
type geometry struct {
	x0, y0, pw int
	rows       []row // the lane rows on display, all[top:top+len(rows)]
	all        []row
	top        int
	t0, t1     int64
}

func (m *Model) changed() { m.gen++ }

// Sync takes the run's extent as it is now, so that a move made before
// the next drawing starts from it (a live run grows between drawings).
func (m *Model) Sync(r *runstate.Run) {
	m.first, m.end = r.Spans.MinStart(), r.Spans.MaxEnd()
}

// rangeOf is Range over a run extending over [first, end).
func (m *Model) rangeOf(first, end int64) (t0, t1 int64) {
	L := m.win
	if L <= 0 || end-first <= L {
		return first, max(end, first+1)
	}
	if m.follow {
		return end - L, end
	}
	t0 = min(max(m.start, first), end-L)
	return t0, t0 + L
}

// shown is the window on display at the last drawing's extent.
func (m *Model) shown() (t0, t1 int64) { return m.rangeOf(m.first, m.end) }

// place shows a window of length L starting at t0: following the run when
// it reaches the run's end, the whole run when L covers it.
func (m *Model) place(t0, L int64) {
	m.win, m.start, m.follow = L, t0, false
	if m.end > m.first && L >= m.end-m.first {
		m.win, m.follow = 0, true
	} else if m.end > m.first && t0+L >= m.end {
		m.follow = true
	}
	m.changed()
}

// ZoomIn shortens the window one step (Windows), around the cursor when
// it shows (the cursor keeps its column), else keeping the window's end
// (or start, when panned).
func (m *Model) ZoomIn() { m.zoomTo(stepBelow(m.length())) }

// ZoomOut lengthens the window one step; past the run's length, the whole
// run shows.
func (m *Model) ZoomOut() { m.zoomTo(stepAbove(m.length())) }

// length is the window's length on display: the run's own when it is
// shorter than the window (or before the first drawing, the window).
func (m *Model) length() int64 {
	if m.end <= m.first {
		return m.win
	}
	t0, t1 := m.shown()
	return t1 - t0
}

// stepBelow is the longest step of Windows shorter than L (the shortest
// when none is); L == 0 (the whole run, not drawn yet) gives the longest.
func stepBelow(L int64) int64 {
	best := int64(Windows[0])
	for _, w := range Windows[:len(Windows)-1] {
		if L <= 0 || int64(w) < L {
			best = int64(w)
		}
	}
	return best
}

// stepAbove is the shortest step of Windows longer than L, or 0 (the
// whole run).
func stepAbove(L int64) int64 {
	for _, w := range Windows[:len(Windows)-1] {
		if L > 0 && int64(w) > L {
			return int64(w)
		}
	}
	return 0
}

func (m *Model) zoomTo(L int64) {
	if m.end <= m.first { // not drawn yet: only the length is known
		m.win = L
		m.changed()
		return
	}
	if L == 0 || L >= m.end-m.first {
		m.place(m.first, 0)
		return
	}
	t0, t1 := m.shown()
	switch {
	case m.hasCur:
		frac := float64(m.cur-t0) / float64(t1-t0)
		m.place(m.cur-int64(frac*float64(L)), L)
	case m.follow:
		m.win = L
		m.changed()
	default:
		m.place(t0+(t1-t0-L)/2, L)
	}
}

// Pan moves the window by a tenth of its length, later for dir > 0; the
// cursor moves with it, keeping its column. Panning to the run's end
// follows the run again.
func (m *Model) Pan(dir int) {
	if m.end <= m.first {
		return
	}
	t0, t1 := m.shown()
	L := t1 - t0
	step := max(L/10, 1) * int64(dir)
	nt0 := min(max(t0+step, m.first), m.end-L)
	m.showCursor(t0, t1)
	m.cur += nt0 - t0
	if L >= m.end-m.first {
		m.place(m.first, 0)
		return
	}
	m.place(nt0, L)
}

// showCursor shows the cursor, in the middle of [t0, t1) when it did not
// show yet.
func (m *Model) showCursor(t0, t1 int64) {
	if !m.hasCur {
		m.hasCur, m.cur = true, t0+(t1-t0)/2
	}
}

// MoveCursor moves the cursor by one cell, later for dir > 0; the window
// pans when the cursor leaves it.
func (m *Model) MoveCursor(dir int) {
	if m.end <= m.first {
		return
	}
	t0, t1 := m.shown()
	if !m.hasCur {
		m.showCursor(t0, t1)
		m.changed()
		return
	}
	cell := max((t1-t0)/int64(max(m.geo.pw, 1)), 1)
	m.cur = min(max(m.cur+int64(dir)*cell, m.first), m.end-1)
	switch L := t1 - t0; {
	case m.cur < t0:
		m.place(m.cur, L)
	case m.cur >= t1:
		m.place(m.cur-L+cell, L)
	default:
		m.changed()
	}
}

// MoveLane moves the cursor to the lane above (dir < 0) or below; with
// the bars, it scrolls them by an epoch.
func (m *Model) MoveLane(dir int) {
	if m.bars {
		m.barOff = max(m.barOff-dir, 0)
		m.changed()
		return
	}
	if m.end <= m.first {
		return
	}
	m.showCursor(m.shown())
	m.lane = min(max(m.lane+dir, 0), max(len(m.geo.all)-1, 0))
	m.changed()
}

// Digit adds a digit to the epoch number typed before g (first epoch, or
// epoch N).
func (m *Model) Digit(d int) {
	if m.count < 0 {
		m.count = 0
	}
	m.count = min(m.count*10+d, 1<<30)
	m.changed()
}

// Typed returns the epoch number typed so far (-1: none).
func (m *Model) Typed() int { return m.count }

// CancelTyped forgets a typed epoch number; it reports whether there was
// one.
func (m *Model) CancelTyped() bool {
	if m.count < 0 {
		return false
	}
	m.count = -1
	m.changed()
	return true
}

// header names the window and, once it shows, the cursor's time.
func (m *Model) header(t0, t1 int64, muted draw.Pen) string {
	h := "  " + spanLen(t1-t0, m.ascii)
	if m.win == 0 || t1-t0 < m.win {
		h += " (whole run)"
	}
	if m.hasCur {
		h += "  cursor " + stamp(m.cur, (t1-t0)/int64(max(m.geo.pw, 1)))
	}
	if m.count >= 0 {
		h += "  epoch " + strconv.Itoa(m.count) + "_ (g: go)"
	}
	return draw.Cut(m.styles.Header.Render("Timeline")+muted.Paint(h), m.w, "")
}

// cursorCell is the cursor's cell in the last drawing, if it shows there.
func (m *Model) cursorCell() (int, bool) {
	g := m.geo
	if !m.hasCur || g.pw <= 0 || m.cur < g.t0 || m.cur >= g.t1 {
		return 0, false
	}
	return int((m.cur - g.t0) * int64(g.pw) / (g.t1 - g.t0)), true
}
