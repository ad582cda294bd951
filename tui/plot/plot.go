package plot

import (
	"math"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/runes"

	"github.com/gnnscope/gnnscope/tui/draw"
)

// Area is a plot's size in cells and the data ranges it shows; values
// outside the ranges are clamped to the edges.
type Area struct {
	W, H   int
	X0, X1 float64
	Y0, Y1 float64
	// Cells draws lines with marker characters instead of braille dots.
	Cells bool
}

// Canvas is one plot being drawn.
type Canvas struct {
	a     Area
	c     canvas.Model
	owner []uint8 // the pen of each cell (0: none)
	plain lipgloss.Style
}

// New returns an empty canvas of area a (a W or H below 1 is taken as 1).
func New(a Area) *Canvas {
	a.W, a.H = max(a.W, 1), max(a.H, 1)
	if !(a.X1 > a.X0) {
		a.X1 = a.X0 + 1
	}
	if !(a.Y1 > a.Y0) {
		a.Y1 = a.Y0 + 1
	}
	return &Canvas{a: a, c: canvas.New(a.W, a.H), owner: make([]uint8, a.W*a.H), plain: lipgloss.NewStyle()}
}

// Col returns the cell column of x.
func (c *Canvas) Col(x float64) int {
	f := (x - c.a.X0) / (c.a.X1 - c.a.X0)
	return min(max(int(math.Round(f*float64(c.a.W-1))), 0), c.a.W-1)
}

// Row returns the cell row of y (0 at the top).
func (c *Canvas) Row(y float64) int {
	f := (y - c.a.Y0) / (c.a.Y1 - c.a.Y0)
	return c.a.H - 1 - min(max(int(math.Round(f*float64(c.a.H-1))), 0), c.a.H-1)
}

func (c *Canvas) set(x, y int, r rune, pen int) {
	if x < 0 || y < 0 || x >= c.a.W || y >= c.a.H {
		return
	}
	c.c.SetRune(canvas.Point{X: x, Y: y}, r)
	c.owner[y*c.a.W+x] = uint8(pen)
}

// Empty reports whether nothing is drawn in cell (x, y).
func (c *Canvas) Empty(x, y int) bool {
	return c.c.Cell(canvas.Point{X: x, Y: y}).Rune == 0
}

// Line draws the series (xs[i], ys[i]) with pen: points joined by lines,
// broken at values that are not finite. A series with more points than
// the plot has dot columns is folded first: each column gets the mean
// of its points. marker is the character of the Cells mode.
func (c *Canvas) Line(xs, ys []float64, pen int, marker rune) {
	cols := c.a.W * 2
	if c.a.Cells {
		cols = c.a.W
	}
	xs, ys = fold(xs, ys, c.a.X0, c.a.X1, cols)
	if c.a.Cells {
		join(xs, ys, func(x, y float64) canvas.Point { return canvas.Point{X: c.Col(x), Y: c.Row(y)} },
			func(q canvas.Point) { c.set(q.X, q.Y, marker, pen) })
		return
	}
	g := graph.NewBrailleGrid(c.a.W, c.a.H, c.a.X0, c.a.X1, c.a.Y0, c.a.Y1)
	join(xs, ys, func(x, y float64) canvas.Point {
		return g.GridPoint(canvas.Float64Point{X: min(max(x, c.a.X0), c.a.X1), Y: min(max(y, c.a.Y0), c.a.Y1)})
	}, g.Set)
	c.drawGrid(g, pen)
}

// join sets the points of the series (xs[i], ys[i]), mapped by at, joined
// by ntcharts' line rasterizer and broken at values that are not finite.
func join(xs, ys []float64, at func(x, y float64) canvas.Point, set func(canvas.Point)) {
	var prev canvas.Point
	have := false
	for i, y := range ys {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			have = false
			continue
		}
		p := at(xs[i], y)
		if have {
			for _, q := range graph.GetLinePoints(prev, p) {
				set(q)
			}
		} else {
			set(p)
		}
		prev, have = p, true
	}
}

// drawGrid puts a braille grid's dots on the canvas with pen, merged
// with the dots already there; marks and character lines stay on top.
func (c *Canvas) drawGrid(g *graph.BrailleGrid, pen int) {
	for y, row := range g.BraillePatterns() {
		for x, r := range row {
			if r == runes.BrailleBlockOffset || r == 0 {
				continue
			}
			pt := canvas.Point{X: x, Y: y}
			if old := c.c.Cell(pt).Rune; old != 0 && !runes.IsBraillePattern(old) {
				continue
			}
			graph.DrawBrailleRune(&c.c, pt, r, c.plain)
			c.owner[y*c.a.W+x] = uint8(pen)
		}
	}
}

// Rule draws a horizontal line at y with r in the cells nothing else
// occupies.
func (c *Canvas) Rule(y float64, r rune, pen int) {
	row := c.Row(y)
	for x := range c.a.W {
		if c.Empty(x, row) {
			c.set(x, row, r, pen)
		}
	}
}

// Mark puts r at (x, y), over whatever is there.
func (c *Canvas) Mark(x, y float64, r rune, pen int) {
	c.set(c.Col(x), c.Row(y), r, pen)
}

// Lines returns the plot as h lines of w cells, painting each run of
// cells of one pen with pens[pen] (pen 0 and pens out of range: none).
func (c *Canvas) Lines(pens []draw.Pen) []string {
	out := make([]string, c.a.H)
	for y := range c.a.H {
		out[y] = draw.PaintRow(c.a.W, pens, func(x int) (rune, int) {
			if r := c.c.Cell(canvas.Point{X: x, Y: y}).Rune; r != 0 {
				return r, int(c.owner[y*c.a.W+x])
			}
			return ' ', 0
		})
	}
	return out
}

// fold reduces a series to at most one point per column of n columns
// over [x0, x1]: the mean x and y of the finite points in it. Columns
// without finite points break the line (NaN). Short series come back
// as they are.
func fold(xs, ys []float64, x0, x1 float64, n int) ([]float64, []float64) {
	if len(ys) <= n || n <= 0 {
		return xs, ys
	}
	fx := make([]float64, n)
	fy := make([]float64, n)
	k := make([]int, n)
	span := x1 - x0
	for i, y := range ys {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		col := min(max(int((xs[i]-x0)/span*float64(n)), 0), n-1)
		fx[col] += xs[i]
		fy[col] += y
		k[col]++
	}
	outX, outY := fx[:0], fy[:0]
	for col := range n {
		if k[col] == 0 {
			if len(outY) > 0 && !math.IsNaN(outY[len(outY)-1]) {
				outX, outY = append(outX, 0), append(outY, math.NaN())
			}
			continue
		}
		outX = append(outX, fx[col]/float64(k[col]))
		outY = append(outY, fy[col]/float64(k[col]))
	}
	return outX, outY
}

// Ranges draws, in each braille dot column x, a vertical line over the
// values [lo[x], hi[x]] joined to last[x-1], the value the previous
// column ended on: a dense series folded by the caller so that no peak
// is lost. Columns past the plot's dot width are ignored; a NaN lo
// leaves a column empty.
func (c *Canvas) Ranges(lo, hi, last []float64, pen int) {
	g := graph.NewBrailleGrid(c.a.W, c.a.H, c.a.X0, c.a.X1, c.a.Y0, c.a.Y1)
	row := func(v float64) int {
		return g.GridPoint(canvas.Float64Point{X: c.a.X0, Y: min(max(v, c.a.Y0), c.a.Y1)}).Y
	}
	prev := -1
	for x := 0; x < min(len(lo), c.a.W*2); x++ {
		if math.IsNaN(lo[x]) {
			prev = -1
			continue
		}
		a, b := row(hi[x]), row(lo[x])
		if prev >= 0 {
			a, b = min(a, prev), max(b, prev)
		}
		for _, q := range graph.GetLinePoints(canvas.Point{X: x, Y: a}, canvas.Point{X: x, Y: b}) {
			g.Set(q)
		}
		prev = row(last[x])
	}
	c.drawGrid(g, pen)
}

// Set puts r with pen in cell (x, y), over whatever is there.
func (c *Canvas) Set(x, y int, r rune, pen int) { c.set(x, y, r, pen) }
