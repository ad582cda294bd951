package memchart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Pen indexes in the grid.
const (
	penCurve = iota + 1
	penBudget
	penOOM
	penAxis
	penEval
	penGuard
)

// Model is a run's memory chart, cached until the run or the size
// changes.
type Model struct {
	styles *common.Styles
	ascii  bool
	w, h   int
	pens   []draw.Pen

	cache runstate.Cache[memKey]
}

// memKey is what a drawing of the chart depends on: the run's memory
// events (counted), OOMs and guard actions only grow (a replay that starts again
// makes them shorter first), so their counts, the configured budget and
// the size tell a stale drawing; span and metric events do not.
type memKey struct {
	run        *runstate.Run
	points     uint64
	ooms, grds int
	budget     int64
	w, h       int
}

// New returns a memory chart drawing with c's styles and options.
func New(c *common.Common) *Model {
	st := c.Styles
	return &Model{styles: st, ascii: c.Opts.ASCII || !st.Glyphs.Braille,
		pens: []draw.Pen{{}, draw.PenOf(st.SeriesStyle(0)), draw.PenOf(st.Budget), draw.PenOf(st.OOM), draw.PenOf(st.Muted),
			draw.PenOf(st.SeriesStyle(3)), draw.PenOf(st.Warn)}}
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View draws the chart, cached while the run's memory events and the
// size stay the same.
func (m *Model) View(r *runstate.Run) string {
	if r == nil || m.w <= 0 || m.h <= 0 {
		return ""
	}
	k := memKey{run: r, points: r.Mem.Changes, ooms: len(r.OOMs), grds: len(r.Guards), budget: r.Budget, w: m.w, h: m.h}
	return m.cache.View(k, func() string { return strings.Join(draw.Block(m.render(r), m.w, m.h), "\n") })
}

// series are one pane's points: training batches or evaluation chunks.
type series struct {
	peak   []int64
	epochs [2]int32 // first and last epoch
	// before[i] is the number of the series' points among the run's first
	// i memory points (len: the run's points + 1): where an OOM or a guard
	// action recorded after i points sits in the series.
	before []int
}

// split parts the run's memory points into training batches and
// evaluation chunks.
func split(mem *runstate.Mem) (train, eval series) {
	train.before = make([]int, mem.Len()+1)
	for i := range mem.Len() {
		s := &train
		if mem.Eval[i] {
			s = &eval
		}
		if len(s.peak) == 0 {
			s.epochs[0] = mem.Epoch[i]
		}
		s.epochs[1] = mem.Epoch[i]
		s.peak = append(s.peak, mem.Peak[i])
		train.before[i+1] = len(train.peak)
	}
	return train, eval
}

// Budget returns the run's memory budget: the last mem event's, else the
// configured one (run_start's config), else an OOM's (0: none).
func Budget(r *runstate.Run) int64 {
	if n := r.Mem.Len(); n > 0 && r.Mem.Budget[n-1] > 0 {
		return r.Mem.Budget[n-1]
	}
	if r.Budget > 0 {
		return r.Budget
	}
	for _, o := range r.OOMs {
		if o.Budget > 0 {
			return o.Budget
		}
	}
	return 0
}

// Demand is what a batch that ran out of memory asked for (see demand).
func Demand(o *runstate.OOM) int64 { return demand(o) }

// demand is what a batch that ran out of memory asked for: the bytes
// live when its allocation was refused plus the allocation.
func demand(o *runstate.OOM) int64 {
	if o.Live > 0 && o.Requested > math.MaxInt64-o.Live {
		return math.MaxInt64
	}
	return max(o.Live, 0) + max(o.Requested, 0)
}

// Top returns the value at the top of the chart for a run: 10 % above
// the largest of its peaks, its budget, the demands of its OOMs and the
// guard's predictions, so that every mark is drawn and the budget line
// sits below the top.
func Top(r *runstate.Run) int64 {
	top := max(r.Mem.MaxPeak, r.Mem.MaxBudget, Budget(r))
	for i := range r.OOMs {
		top = max(top, demand(&r.OOMs[i]))
	}
	for _, g := range r.Guards {
		top = max(top, g.Predicted, g.Actual)
	}
	if top <= 0 {
		return 1
	}
	return top + min(top/10, math.MaxInt64-top)
}

// header names the chart and its figures: the peaks, the budget, the
// OOMs with what the last one asked for and the guard's actions with
// their largest predicted and actual peaks; the details are left out
// when they do not fit the width.
func (m *Model) header(r *runstate.Run, train, eval *series) string {
	for level := 0; level < 2; level++ {
		if h := m.headerText(r, train, eval, level); draw.Width(h) <= m.w {
			return h
		}
	}
	return m.headerText(r, train, eval, 2)
}

// headerText writes the header at a level of detail: 0 everything, 1
// without the note that no mem event came (when a budget or an OOM
// says more), 2 without what the OOMs asked for and the guard's peaks.
func (m *Model) headerText(r *runstate.Run, train, eval *series, level int) string {
	var b strings.Builder
	b.WriteString(m.styles.Header.Render("Memory"))
	detail := level < 2
	switch {
	case r.Mem.Len() == 0:
		if level == 0 || (Budget(r) == 0 && len(r.OOMs) == 0) {
			b.WriteString(m.pens[penAxis].Paint("  " + r.NoMemText()))
		}
	case len(eval.peak) == 0:
		b.WriteString("  peak " + units.BytesFine(r.Mem.MaxPeak))
	default:
		if len(train.peak) > 0 {
			b.WriteString("  train peak " + units.BytesFine(slicesMax(train.peak)))
		}
		b.WriteString("  " + m.pens[penEval].Paint("eval peak "+units.BytesFine(slicesMax(eval.peak))))
	}
	if budget := Budget(r); budget > 0 {
		b.WriteString("  " + m.pens[penBudget].Paint(m.styles.Glyphs.Budget) + " budget " + units.BytesFine(budget))
	}
	if n := len(r.OOMs); n > 0 {
		s := m.styles.Glyphs.OOM + " " + strconv.Itoa(n) + " OOM"
		if detail {
			s += " at " + units.BytesFine(demand(&r.OOMs[n-1]))
		}
		b.WriteString("  " + m.pens[penOOM].Paint(s))
	}
	if n := len(r.Guards); n > 0 {
		var pred, actual int64
		for _, g := range r.Guards {
			pred, actual = max(pred, g.Predicted), max(actual, g.Actual)
		}
		s := m.styles.Glyphs.Guard + " " + strconv.Itoa(n) + " guard"
		if detail {
			s += ": predicted " + units.BytesFine(pred)
			if actual > 0 {
				s += ", actual " + units.BytesFine(actual)
			}
		}
		b.WriteString("  " + m.pens[penGuard].Paint(s))
	}
	return b.String()
}

func slicesMax(vs []int64) int64 {
	var m int64
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// pane is one plot of the chart: a series drawn in its own columns.
type pane struct {
	s    *series
	unit string // what a point is: "batches", "eval chunks"
	pen  int
	w, h int
	g    surface
}

// surface is what a pane is drawn on: ntcharts' canvas (tui/plot) for
// braille, the project's grid for --ascii.
type surface interface {
	Set(x, y int, r rune, pen int)
	Free(x, y int) bool // nothing drawn in the cell
	Lines(pens []draw.Pen) []string
}

// asciiGrid is a draw.Grid as a surface.
type asciiGrid struct{ *draw.Grid }

func (g asciiGrid) Free(x, y int) bool { return !g.HasDots(x, y) && g.Get(x, y) == 0 }

// brailleCanvas is a plot.Canvas as a surface.
type brailleCanvas struct{ *plot.Canvas }

func (c brailleCanvas) Free(x, y int) bool { return c.Empty(x, y) }

// panes lays out the plots in w columns: training batches, and beside
// them, in a third of the width, evaluation chunks when the run has any
// and there is room (an evaluation-only run gets one pane of chunks).
func panes(train, eval *series, w int) []*pane {
	tp := &pane{s: train, unit: "batches", pen: penCurve, w: w}
	if len(eval.peak) == 0 {
		return []*pane{tp}
	}
	ep := &pane{s: eval, unit: "eval chunks", pen: penEval, w: w}
	if len(train.peak) == 0 {
		return []*pane{ep}
	}
	ew := max(w/3, 8)
	if w-ew-1 < 8 {
		return []*pane{tp}
	}
	tp.w, ep.w = w-ew-1, ew
	return []*pane{tp, ep}
}

func (m *Model) render(r *runstate.Run) []string {
	train, eval := split(&r.Mem)
	out := []string{draw.Cut(m.header(r, &train, &eval), m.w, m.styles.Glyphs.Ellipsis)}
	ph := m.h - 2 // header and x axis
	budget := Budget(r)
	if ph < 1 || (r.Mem.Len() == 0 && budget == 0 && len(r.OOMs) == 0) {
		return out
	}
	top := Top(r)
	labels := []string{units.BytesFine(top), units.BytesFine(0)}
	lw := max(draw.Width(labels[0]), draw.Width(labels[1]))
	if m.w-lw-1 < 2 {
		return out
	}
	budgetRow := -1
	if budget > 0 {
		budgetRow = rowOf(budget, top, ph)
	}
	ps := panes(&train, &eval, m.w-lw-1)
	for _, p := range ps {
		p.h = ph
		if m.ascii {
			g := draw.NewGrid(p.w, ph)
			m.cells(g, p.s.peak, top, p.pen)
			p.g = asciiGrid{g}
		} else {
			p.g = brailleCanvas{dots(p.s.peak, top, p.w, ph, p.pen)}
		}
		if budgetRow >= 0 { // the budget line goes where the curve is not
			br := []rune(m.styles.Glyphs.Budget)[0]
			for x := 0; x < p.w; x++ {
				if p.g.Free(x, budgetRow) {
					p.g.Set(x, budgetRow, br, penBudget)
				}
			}
		}
	}
	if ps[0].s == &train {
		m.marks(r, ps[0], top)
	}
	vline := m.styles.Glyphs.VLine
	sep := m.pens[penAxis].Paint(vline)
	lines := make([][]string, len(ps))
	for i, p := range ps {
		lines[i] = p.g.Lines(m.pens)
	}
	for y := range ph {
		label := ""
		switch {
		case y == budgetRow:
			label = units.BytesFine(budget)
		case y == 0:
			label = labels[0]
		case y == ph-1:
			label = labels[1]
		}
		if draw.Width(label) > lw {
			label = ""
		}
		l := m.pens[penAxis].Paint(draw.PadLeft(label, lw)+vline) + lines[0][y]
		if len(ps) == 2 {
			l += sep + lines[1][y]
		}
		out = append(out, l)
	}
	axis := strings.Repeat(" ", lw+1) + axisText(r, ps[0])
	if len(ps) == 2 {
		axis += " " + axisText(r, ps[1])
	}
	return append(out, m.pens[penAxis].Paint(axis))
}

// marks draws the OOMs (at what the batch asked for) and the guard's
// actions (at the batch's predicted peak; its actual peak is the curve)
// on the training pane.
func (m *Model) marks(r *runstate.Run, p *pane, top int64) {
	n, ph := len(p.s.peak), p.h
	at := func(memIndex int) int {
		i := p.s.before[min(max(memIndex, 0), len(p.s.before)-1)]
		i = min(i, n-1)
		if n <= p.w {
			return colOfPoint(max(i, 0), n, p.w)
		}
		return i * p.w / n
	}
	gr := []rune(m.styles.Glyphs.Guard)[0]
	for _, g := range r.Guards {
		if g.Predicted > 0 {
			p.g.Set(at(g.MemIndex), rowOf(g.Predicted, top, ph), gr, penGuard)
		}
	}
	or := []rune(m.styles.Glyphs.OOM)[0]
	for i := range r.OOMs {
		o := &r.OOMs[i]
		p.g.Set(at(o.MemIndex), rowOf(demand(o), top, ph), or, penOOM)
	}
}

// axisText labels a pane's x axis in its width: the epochs its points
// span and how many there are ("ep 1   600 batches   ep 3"); without
// points, the batch of the first OOM.
func axisText(r *runstate.Run, p *pane) string {
	s := p.s
	var left, mid, right string
	switch {
	case len(s.peak) > 0:
		left = "ep " + strconv.Itoa(int(s.epochs[0]))
		if s.epochs[1] != s.epochs[0] {
			right = "ep " + strconv.Itoa(int(s.epochs[1]))
		}
		mid = strconv.Itoa(len(s.peak)) + " " + p.unit
	case len(r.OOMs) > 0:
		left = "ep " + strconv.Itoa(r.OOMs[0].Epoch) + " batch " + strconv.Itoa(r.OOMs[0].Batch)
	}
	return draw.AxisLabels(left, mid, right, p.w)
}

// rowOf is the cell row of value v on a chart of ph rows topped at top.
func rowOf(v, top int64, ph int) int {
	f := float64(v) / float64(top)
	return min(max(ph-1-int(math.Round(f*float64(ph-1))), 0), ph-1)
}

// colOfPoint spreads n <= w points over w columns.
func colOfPoint(i, n, w int) int {
	if n <= 1 {
		return 0
	}
	return i * (w - 1) / (n - 1)
}

// dots draws the curve of peaks in braille on ntcharts' canvas, w×h
// cells: with fewer points than dot columns, a line through them;
// otherwise, in each dot column, the range of the peaks it covers,
// joined to the column before, so that no peak is lost.
func dots(peaks []int64, top int64, w, h, pen int) *plot.Canvas {
	n := len(peaks)
	W := w * 2
	c := plot.New(plot.Area{W: w, H: h, X0: 0, X1: float64(max(n-1, 1)), Y0: 0, Y1: float64(top)})
	if n == 0 {
		return c
	}
	if n <= W {
		xs, ys := make([]float64, n), make([]float64, n)
		for i, v := range peaks {
			xs[i], ys[i] = float64(i), float64(v)
		}
		c.Line(xs, ys, pen, '*')
		return c
	}
	lo, hi, last := make([]float64, W), make([]float64, W), make([]float64, W)
	for x := range W {
		l, u := foldRange(peaks, x, W)
		lo[x], hi[x], last[x] = float64(l), float64(u), float64(peaks[(x+1)*n/W-1])
	}
	c.Ranges(lo, hi, last, pen)
	return c
}

// cells draws the curve of peaks with characters: with fewer points than
// columns, '*' at each point joined by '.'; otherwise '*' over the range
// of the peaks each column covers.
func (m *Model) cells(g *draw.Grid, peaks []int64, top int64, pen int) {
	n := len(peaks)
	if n <= g.W {
		// '.' joins the points, '*' marks them
		for i := 1; i < n; i++ {
			g.CellLine(colOfPoint(i-1, n, g.W), rowOf(peaks[i-1], top, g.H), colOfPoint(i, n, g.W), rowOf(peaks[i], top, g.H), '.', pen)
		}
		for i := 0; i < n; i++ {
			g.Set(colOfPoint(i, n, g.W), rowOf(peaks[i], top, g.H), '*', pen)
		}
		return
	}
	for x := 0; x < g.W; x++ {
		lo, hi := foldRange(peaks, x, g.W)
		for yy := rowOf(hi, top, g.H); yy <= rowOf(lo, top, g.H); yy++ {
			g.Set(x, yy, '*', pen)
		}
	}
}

// foldRange returns the smallest and largest of the values column x of w
// covers (len(vs) >= w).
func foldRange(vs []int64, x, w int) (lo, hi int64) {
	n := len(vs)
	i0, i1 := x*n/w, (x+1)*n/w
	lo, hi = vs[i0], vs[i0]
	for _, v := range vs[i0+1 : i1] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}
