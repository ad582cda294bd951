package memchart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Pen indexes in the grid.
const (
	penCurve = iota + 1
	penBudget
	penOOM
	penAxis
)

// Model is a run's memory chart, cached until the run or the size
// changes.
type Model struct {
	styles *common.Styles
	ascii  bool
	w, h   int
	pens   []draw.Pen

	cache runstate.ViewCache
}

// New returns a memory chart drawing with c's styles and options.
func New(c *common.Common) *Model {
	st := c.Styles
	return &Model{styles: st, ascii: c.Opts.ASCII || !st.Glyphs.Braille,
		pens: []draw.Pen{{}, draw.PenOf(st.SeriesStyle(0)), draw.PenOf(st.Budget), draw.PenOf(st.OOM), draw.PenOf(st.Muted)}}
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View draws the chart (cached while nothing changed).
func (m *Model) View(r *runstate.Run) string {
	return m.cache.View(r, m.w, m.h, 0, func() string { return strings.Join(draw.Block(m.render(r), m.w, m.h), "\n") })
}

// Top returns the value at the top of the chart for a run: 10 % above
// the larger of its largest peak and its budget, so the budget line sits
// below the top and the range only moves when a peak passes it.
func Top(mem *runstate.Mem) int64 {
	top := max(mem.MaxPeak, mem.MaxBudget)
	if top <= 0 {
		return 1
	}
	return top + top/10
}

func (m *Model) header(r *runstate.Run) string {
	mem := &r.Mem
	var b strings.Builder
	b.WriteString(m.styles.Header.Render("Memory"))
	if mem.Len() == 0 {
		b.WriteString(m.pens[penAxis].Paint("  no mem events yet"))
		return b.String()
	}
	b.WriteString("  peak " + units.BytesFine(mem.MaxPeak))
	if budget := mem.Budget[mem.Len()-1]; budget > 0 {
		b.WriteString("  " + m.pens[penBudget].Paint(m.styles.Glyphs.Budget) + " budget " + units.BytesFine(budget))
	}
	if n := len(r.OOMs); n > 0 {
		b.WriteString("  " + m.pens[penOOM].Paint(m.styles.Glyphs.OOM+" "+strconv.Itoa(n)+" OOM"))
	}
	return b.String()
}

func (m *Model) render(r *runstate.Run) []string {
	out := []string{draw.Cut(m.header(r), m.w, m.styles.Glyphs.Ellipsis)}
	mem := &r.Mem
	ph := m.h - 2 // header and x axis
	if ph < 1 || mem.Len() == 0 {
		return out
	}
	top := Top(mem)
	labels := []string{units.BytesFine(top), units.BytesFine(0)}
	lw := max(draw.Width(labels[0]), draw.Width(labels[1]))
	pw := m.w - lw - 1
	if pw < 2 {
		return out
	}
	g := draw.NewGrid(pw, ph)
	n := mem.Len()
	if m.ascii {
		m.cells(g, mem, top)
	} else {
		m.dots(g, mem, top)
	}
	// the budget line goes where the curve is not
	budget := mem.Budget[n-1]
	budgetRow := -1
	if budget > 0 {
		budgetRow = rowOf(budget, top, ph)
		br := []rune(m.styles.Glyphs.Budget)[0]
		for x := 0; x < pw; x++ {
			if !g.HasDots(x, budgetRow) && g.Get(x, budgetRow) == 0 {
				g.Set(x, budgetRow, br, penBudget)
			}
		}
	}
	oomRow := 0
	if budgetRow >= 0 {
		oomRow = budgetRow
	}
	or := []rune(m.styles.Glyphs.OOM)[0]
	for _, o := range r.OOMs {
		x := min(o.MemIndex, n-1) * pw / max(n, 1)
		if n <= pw {
			x = colOfPoint(min(o.MemIndex, n-1), n, pw)
		}
		g.Set(x, oomRow, or, penOOM)
	}
	lines := g.Lines(m.pens)
	vline := m.styles.Glyphs.VLine
	for y, l := range lines {
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
		out = append(out, m.pens[penAxis].Paint(draw.PadLeft(label, lw)+vline)+l)
	}
	first, last := "batch 1", strconv.Itoa(n)
	axis := strings.Repeat(" ", lw+1) + first
	if gap := pw - len(first) - len(last); gap > 0 {
		axis += strings.Repeat(" ", gap) + last
	}
	return append(out, m.pens[penAxis].Paint(axis))
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

// dots draws the curve in braille: with fewer points than dot columns, a
// line through them; otherwise, in each dot column, the range of the
// peaks it covers, joined to the column before.
func (m *Model) dots(g *draw.Grid, mem *runstate.Mem, top int64) {
	W, H := g.DotsW(), g.DotsH()
	y := func(v int64) int {
		return H - 1 - int(math.Round(float64(v)/float64(top)*float64(H-1)))
	}
	n := mem.Len()
	if n <= W {
		px, py := 0, y(mem.Peak[0])
		for i := 0; i < n; i++ {
			x, yy := colOfPoint(i, n, W), y(mem.Peak[i])
			g.Line(px, py, x, yy, penCurve)
			px, py = x, yy
		}
		return
	}
	prev := -1
	for x := 0; x < W; x++ {
		lo, hi := foldRange(mem.Peak, x, W)
		a, b := y(hi), y(lo)
		if prev >= 0 {
			a, b = min(a, prev), max(b, prev)
		}
		g.VDots(x, a, b, penCurve)
		prev = y(mem.Peak[(x+1)*n/W-1])
	}
}

// cells draws the curve with characters: with fewer points than
// columns, '*' at each point joined by '.'; otherwise '*' over the range
// of the peaks each column covers.
func (m *Model) cells(g *draw.Grid, mem *runstate.Mem, top int64) {
	n := mem.Len()
	if n <= g.W {
		// '.' joins the points, '*' marks them
		for i := 1; i < n; i++ {
			g.CellLine(colOfPoint(i-1, n, g.W), rowOf(mem.Peak[i-1], top, g.H), colOfPoint(i, n, g.W), rowOf(mem.Peak[i], top, g.H), '.', penCurve)
		}
		for i := 0; i < n; i++ {
			g.Set(colOfPoint(i, n, g.W), rowOf(mem.Peak[i], top, g.H), '*', penCurve)
		}
		return
	}
	for x := 0; x < g.W; x++ {
		lo, hi := foldRange(mem.Peak, x, g.W)
		for yy := rowOf(hi, top, g.H); yy <= rowOf(lo, top, g.H); yy++ {
			g.Set(x, yy, '*', penCurve)
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
