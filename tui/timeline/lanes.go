package timeline

import (
	"strings"

	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// lanes draws one row per lane: its label, a rule and the cells. marks,
// when not nil, are OOM marks drawn over the first row's cells (when the
// OOM row of their own finds no room).
func (m *Model) lanes(r *runstate.Run, lanes []uint16, labelW, pw int, t0, t1 int64, marks []bool) []string {
	nst := min(r.Stages.Len(), maxStages)
	g := newGrid(t0, t1, pw)
	cov := m.coverage(r, lanes, &g, nst)
	p := m.stagePaint(r, nst)
	w := &rowWriter{pens: p.pens, markPen: draw.PenOf(m.styles.OOM), markGlyph: m.styles.Glyphs.OOM}
	vline := m.styles.Glyphs.VLine
	out := make([]string, len(lanes))
	for row, id := range lanes {
		w.b.Reset()
		w.b.WriteString(draw.PadRight(LaneLabel(r.Lanes.Name(id)), labelW))
		w.b.WriteString(vline)
		w.marks = nil
		if row == 0 {
			w.marks = marks
		}
		w.cells(cov[row*pw*nst:(row+1)*pw*nst], &g, &p)
		out[row] = w.b.String()
	}
	return out
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
func (m *Model) coverage(r *runstate.Run, lanes []uint16, g *grid, nst int) []int64 {
	rowOf := make([]int, r.Lanes.Len())
	for i := range rowOf {
		rowOf[i] = -1
	}
	for row, id := range lanes {
		rowOf[id] = row
	}
	pw, t0, t1, edges := g.n, g.t0, g.t1, g.edges
	n := len(lanes) * pw * nst
	if cap(m.cov) < n {
		m.cov = make([]int64, n)
	}
	cov := m.cov[:n]
	clear(cov)
	sp := &r.Spans
	n0 := sp.Len()
	starts, durs, lns, stgs := sp.Start[:n0], sp.Dur[:n0], sp.Lane[:n0], sp.Stage[:n0]
	for i := sp.From(t0); i < n0; i++ {
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
	nested []bool // the slot's stage is nested (see nested)
	pens   []draw.Pen
	glyphs []string
	faint  string // a cell its stage covers less than a tenth of
}

// stagePaint returns the paint of the run's first nst stage slots; the
// last slot stands for every other stage when the run has more.
func (m *Model) stagePaint(r *runstate.Run, nst int) stagePaint {
	p := stagePaint{nested: make([]bool, nst), pens: make([]draw.Pen, nst), glyphs: make([]string, nst), faint: m.faint()}
	for k := range nst {
		name := r.Stages.Name(uint16(k))
		if k == maxStages-1 && r.Stages.Len() > maxStages {
			name = runstate.Other
		}
		p.nested[k] = nested(name)
		p.pens[k] = m.pen(name)
		p.glyphs[k] = m.glyph(name)
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
}

// cells writes a lane's cells, given its coverage per cell and stage slot:
// the glyph of the cell's strongest stage, a faint mark when that stage
// covers less than a tenth of the cell, a blank when nothing does.
func (w *rowWriter) cells(cov []int64, g *grid, p *stagePaint) {
	nst := len(p.pens)
	w.cur = -1
	for c := range g.n {
		if w.marks != nil && w.marks[c] {
			w.flush()
			w.markPen.Write(&w.b, w.markGlyph)
			w.cur = -2 // no run: the next cell starts one
			continue
		}
		best, bestCov := strongest(cov[c*nst:(c+1)*nst], p.nested)
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
