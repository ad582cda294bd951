package timeline

import (
	"strings"

	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// lanes draws one row per lane: its label, a rule and the cells. marks,
// when not nil, are OOM marks drawn over the first row's cells (when the
// OOM row of their own finds no room).
func (m *Model) lanes(r *runstate.Run, rows []row, labelW, pw int, t0, t1 int64, marks []bool) []string {
	nst := min(r.Stages.Len(), maxStages)
	g := newGrid(t0, t1, pw)
	cov := m.coverage(r, rows, &g, nst)
	p := m.stagePaint(r, nst)
	w := &rowWriter{pens: p.pens, markPen: draw.PenOf(m.styles.OOM), markGlyph: m.styles.Glyphs.OOM}
	out := make([]string, len(rows))
	for row := range rows {
		cur := m.hasCur && m.top+row == m.lane
		if !rows[row].cells() {
			out[row] = m.nodeHeader(&rows[row], cur)
			continue
		}
		w.b.Reset()
		w.b.WriteString(draw.Cut(draw.PadRight(m.label(r, &rows[row]), labelW), labelW, ""))
		if cur {
			w.b.WriteString(m.styles.Glyphs.Cursor) // the cursor's lane
		} else {
			w.b.WriteString(m.styles.Glyphs.VLine)
		}
		w.marks = nil
		if row == 0 {
			w.marks = marks
		}
		w.cells(cov[row*pw*nst:(row+1)*pw*nst], &g, &p)
		out[row] = w.b.String()
	}
	return out
}

// nodeHeader draws an open node's header across the label and the cells,
// marked when the cursor is on it.
func (m *Model) nodeHeader(w *row, cur bool) string {
	text := m.headerText(w, w.ranks)
	if cur {
		text = m.styles.Glyphs.Cursor + " " + text
	}
	return draw.PenOf(m.styles.Header).Paint(draw.Cut(text, m.w, ""))
}

// grid divides the window [t0, t1) into n cells: cell c covers
// [edges[c], edges[c+1]).
type grid struct {
	t0, t1 int64
	n      int
	edges  []int64
	scale  float64 // cells per ns
}

func newGrid(t0, t1 int64, n int) grid {
	span := t1 - t0
	g := grid{t0: t0, t1: t1, n: n, edges: make([]int64, n+1), scale: float64(n) / float64(span)}
	for c := range g.edges {
		g.edges[c] = t0 + int64(c)*span/int64(n)
	}
	return g
}

// cell finds a time's cell with one multiplication, corrected against the
// edges so that the mapping is exact to the nanosecond.
func (g *grid) cell(t int64) int {
	c := min(max(int(float64(t-g.t0)*g.scale), 0), g.n-1)
	for c < g.n-1 && g.edges[c+1] <= t {
		c++
	}
	for c > 0 && g.edges[c] > t {
		c--
	}
	return c
}

// coverage adds up how long the run's spans cover each cell of each lane
// row, in ns, per stage slot (stages past nst share the last slot): the
// time of lanes[row], cell c and slot k is at (row*g.n+c)*nst+k. The
// result reuses m.cov.
func (m *Model) coverage(r *runstate.Run, rows []row, g *grid, nst int) []int64 {
	rowOf := make([]int, r.Lanes.Len())
	for i := range rowOf {
		rowOf[i] = -1
	}
	for i := range rows {
		switch w := &rows[i]; {
		case !w.cells():
		case w.kind == rowLane:
			rowOf[w.lane] = i
		default:
			for _, id := range w.lanes {
				rowOf[id] = i
			}
		}
	}
	pw, t0, t1, edges := g.n, g.t0, g.t1, g.edges
	n := len(rows) * pw * nst
	if cap(m.cov) < n {
		m.cov = make([]int64, n)
	}
	cov := m.cov[:n]
	clear(cov)
	sp := &r.Spans
	n0 := sp.Len()
	from := sp.From(t0)
	if level, ok := binLevel(sp.Bins(), (t1-t0)/int64(pw)); ok && n0-from > m.binned {
		m.coverageBins(r, rows, g, nst, level, cov)
		return cov
	}
	starts, durs, lns, stgs := sp.Start[:n0], sp.Dur[:n0], sp.Lane[:n0], sp.Stage[:n0]
	for i := from; i < n0; i++ {
		s := starts[i]
		e := s + durs[i]
		if e <= t0 || s >= t1 || e <= s {
			continue
		}
		row := rowOf[lns[i]]
		if row < 0 {
			continue
		}
		slot := min(int(stgs[i]), nst-1)
		s, e = max(s, t0), min(e, t1)
		c0 := g.cell(s)
		base := row*pw*nst + slot
		if e <= edges[c0+1] { // within one cell: most spans of a long window
			cov[base+c0*nst] += e - s
			continue
		}
		c1 := g.cell(e - 1)
		for c := c0; c <= c1; c++ {
			if ov := min(e, edges[c+1]) - max(s, edges[c]); ov > 0 {
				cov[base+c*nst] += ov
			}
		}
	}
	return cov
}

// stagePaint is how the cells of each stage slot are drawn.
type stagePaint struct {
	nested  []bool // the slot's stage is nested (see nested)
	pens    []draw.Pen
	glyphs  []string
	letters []string // the slot's letter (Styles.Glyph), for markers
	faint   string   // a cell its stage covers less than a tenth of
	// color: a marker is drawn on its cell's dominant stage's color;
	// without, markers and the dominant stage take turns
	color bool
	mix   func(k, dom int) draw.Pen // the pen of slot k's marker over slot dom
}

// stagePaint returns the paint of the run's first nst stage slots; the
// last slot stands for every other stage when the run has more.
func (m *Model) stagePaint(r *runstate.Run, nst int) stagePaint {
	p := stagePaint{nested: make([]bool, nst), pens: make([]draw.Pen, nst), glyphs: make([]string, nst),
		letters: make([]string, nst), faint: m.faint(), color: m.styles.Color}
	names := make([]string, nst)
	for k := range nst {
		name := r.Stages.Name(uint16(k))
		if k == maxStages-1 && r.Stages.Len() > maxStages {
			name = runstate.Other
		}
		names[k] = name
		p.nested[k] = nested(name)
		p.pens[k] = m.pen(name)
		p.glyphs[k] = m.glyph(name)
		p.letters[k] = m.styles.Glyph(name)
	}
	p.mix = func(k, dom int) draw.Pen {
		key := [2]string{names[k]}
		if dom >= 0 {
			key[1] = names[dom]
		}
		pen, ok := m.mixed[key]
		if !ok {
			st := m.styles.StageStyle(names[k])
			if dom >= 0 && m.styles.Color {
				st = st.Background(m.styles.StageStyle(names[dom]).GetForeground())
			}
			pen = draw.PenOf(st)
			m.mixed[key] = pen
		}
		return pen
	}
	return p
}

// strongest returns the stage slot that wins a cell, given the cell's
// coverage per slot, and its coverage: the slot covering the most, a
// nested stage winning over its parent when it covers as much; -1 for an
// empty cell.
func strongest(cov []int64, nested []bool) (best int, bestCov int64) {
	best = -1
	var bestScore int64
	for k, v := range cov {
		if v == 0 {
			continue
		}
		score := v * 100
		if nested[k] {
			score = v * 101
		}
		if score > bestScore {
			best, bestScore, bestCov = k, score, v
		}
	}
	return best, bestCov
}

// rowWriter writes the cells of a lane after its label, painting each run
// of cells of one stage with a single pen.
type rowWriter struct {
	b, run strings.Builder
	cur    int // stage slot of the pending run, or -1 for blanks
	pens   []draw.Pen
	// marks, when not nil, are the cells drawn as markGlyph in markPen
	// over whatever they hold
	marks     []bool
	markPen   draw.Pen
	markGlyph string

	win  []int   // scratch: each cell's strongest slot
	wcov []int64 // and its coverage
	last []int   // scratch: the cell each slot was last shown as a marker in
}

// cells writes a lane's cells, given its coverage per cell and stage slot:
// the glyph of the cell's strongest stage, a faint mark when that stage
// covers less than a tenth of the cell, a blank when nothing does. A
// stage present in a cell that neither it nor its neighbors show (a short
// span at coarse zoom) is drawn as a marker, its letter: over the
// strongest stage's color, or without color every other cell, so that
// the strongest stage shows too.
func (w *rowWriter) cells(cov []int64, g *grid, p *stagePaint) {
	nst := len(p.pens)
	w.winners(cov, g.n, p)
	w.cur = -1
	prevMarker := false
	for c := range g.n {
		if w.marks != nil && w.marks[c] {
			w.flush()
			w.markPen.Write(&w.b, w.markGlyph)
			w.cur = -2 // no run: the next cell starts one
			prevMarker = false
			continue
		}
		best, bestCov := w.win[c], w.wcov[c]
		if k := w.hidden(cov[c*nst:(c+1)*nst], c, p); k >= 0 && (p.color || !prevMarker) {
			w.flush()
			dom := best
			if bestCov*10 < g.edges[c+1]-g.edges[c] {
				dom = -1 // a faint cell: no color under the marker
			}
			p.mix(k, dom).Write(&w.b, p.letters[k])
			w.last[k] = c
			w.cur, prevMarker = -2, true
			continue
		}
		prevMarker = false
		if best != w.cur {
			w.flush()
			w.cur = best
		}
		switch {
		case best < 0:
			w.run.WriteByte(' ')
		case bestCov*10 >= g.edges[c+1]-g.edges[c]:
			w.run.WriteString(p.glyphs[best])
		default:
			w.run.WriteString(p.faint)
		}
	}
	w.flush()
}

// winners finds each cell's strongest slot.
func (w *rowWriter) winners(cov []int64, n int, p *stagePaint) {
	nst := len(p.pens)
	if cap(w.win) < n {
		w.win, w.wcov = make([]int, n), make([]int64, n)
	}
	w.win, w.wcov = w.win[:n], w.wcov[:n]
	if len(w.last) < nst {
		w.last = make([]int, nst)
	}
	for k := range w.last {
		w.last[k] = -1
	}
	for c := range n {
		w.win[c], w.wcov[c] = strongest(cov[c*nst:(c+1)*nst], p.nested)
	}
}

// hidden returns the slot to mark in cell c: of the stages present in it
// that neither it nor its neighbors show, the one shown least recently
// (-1: none). A stage holding a nested stage that shows (train around
// forward) is not hidden: its child stands for it.
func (w *rowWriter) hidden(cov []int64, c int, p *stagePaint) int {
	best := w.win[c]
	if best < 0 {
		return -1
	}
	k0 := -1
	for k, v := range cov {
		if v == 0 || k == best || (c > 0 && k == w.win[c-1]) || (c+1 < len(w.win) && k == w.win[c+1]) {
			continue
		}
		if !p.nested[k] && p.nested[best] && v >= cov[best] {
			continue
		}
		if k0 < 0 || w.last[k] < w.last[k0] {
			k0 = k
		}
	}
	return k0
}

// flush writes the pending run of cells in its pen.
func (w *rowWriter) flush() {
	if w.run.Len() == 0 {
		return
	}
	if w.cur >= 0 {
		w.pens[w.cur].Write(&w.b, w.run.String())
	} else {
		w.b.WriteString(w.run.String())
	}
	w.run.Reset()
}
