package draw

import "strings"

// Grid is a w×h block of cells to draw charts on. A cell holds a rune, or
// braille dots (Dot) when no rune was set, and the index of the pen it is
// painted with (0: none). String paints runs of cells with equal pens at
// once.
type Grid struct {
	W, H  int
	runes []rune
	dots  []uint8
	pens  []uint8
}

// NewGrid returns an empty grid (every cell a space).
func NewGrid(w, h int) *Grid {
	w, h = max(w, 0), max(h, 0)
	return &Grid{W: w, H: h, runes: make([]rune, w*h), dots: make([]uint8, w*h), pens: make([]uint8, w*h)}
}

// Set puts rune r with pen p in cell (x, y); outside the grid it does
// nothing.
func (g *Grid) Set(x, y int, r rune, p int) {
	if x < 0 || y < 0 || x >= g.W || y >= g.H {
		return
	}
	i := y*g.W + x
	g.runes[i] = r
	g.pens[i] = uint8(p)
}

// Get returns the rune of cell (x, y) (0 if none or outside).
func (g *Grid) Get(x, y int) rune {
	if x < 0 || y < 0 || x >= g.W || y >= g.H {
		return 0
	}
	return g.runes[y*g.W+x]
}

// Text writes s from cell (x, y) on, one rune per cell (s must be of
// single-width characters), cut at the grid's edge.
func (g *Grid) Text(x, y int, s string, p int) {
	for _, r := range s {
		g.Set(x, y, r, p)
		x++
	}
}

// brailleBit is the dot of each (column, row) of a braille cell.
var brailleBit = [4][2]uint8{{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}}

// DotsW and DotsH are the grid's size in braille dots.
func (g *Grid) DotsW() int { return g.W * 2 }

// DotsH is the grid's height in braille dots (4 per cell).
func (g *Grid) DotsH() int { return g.H * 4 }

// Dot sets braille dot (px, py), px in [0, 2W), py in [0, 4H) from the
// top, with pen p (a cell keeps the pen of its last dot).
func (g *Grid) Dot(px, py int, p int) {
	if px < 0 || py < 0 || px >= g.W*2 || py >= g.H*4 {
		return
	}
	i := (py/4)*g.W + px/2
	g.dots[i] |= brailleBit[py%4][px%2]
	g.pens[i] = uint8(p)
}

// VDots sets the dots of column px from py0 to py1 (either order).
func (g *Grid) VDots(px, py0, py1 int, p int) {
	if py0 > py1 {
		py0, py1 = py1, py0
	}
	for y := py0; y <= py1; y++ {
		g.Dot(px, y, p)
	}
}

// Line draws a line of dots from (x0, y0) to (x1, y1).
func (g *Grid) Line(x0, y0, x1, y1 int, p int) {
	bresenham(x0, y0, x1, y1, func(x, y int) { g.Dot(x, y, p) })
}

// CellLine draws a line of runes r from cell (x0, y0) to (x1, y1), for
// charts without braille.
func (g *Grid) CellLine(x0, y0, x1, y1 int, r rune, p int) {
	bresenham(x0, y0, x1, y1, func(x, y int) { g.Set(x, y, r, p) })
}

// bresenham calls plot with every point of the line from (x0, y0) to
// (x1, y1), both ends included (Bresenham's algorithm; at most 65536
// points).
func bresenham(x0, y0, x1, y1 int, plot func(x, y int)) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for n := 0; n < 1<<16; n++ {
		plot(x0, y0)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Lines renders the grid, painting cell runs with pens[pen index] (index
// 0 and indexes past pens are unpainted).
func (g *Grid) Lines(pens []Pen) []string {
	out := make([]string, g.H)
	for y := 0; y < g.H; y++ {
		out[y] = PaintRow(g.W, pens, func(x int) (rune, int) {
			i := y*g.W + x
			r := g.runes[i]
			if r == 0 {
				if d := g.dots[i]; d != 0 {
					r = rune(0x2800 + int(d))
				} else {
					r = ' '
				}
			}
			return r, int(g.pens[i])
		})
	}
	return out
}

// PaintRow renders a row of w cells, cell(x) giving each cell's rune and
// pen index, painting each run of cells of one pen with pens[pen] (pen 0,
// pens past the slice and blank cells are unpainted, which keeps runs
// long).
func PaintRow(w int, pens []Pen, cell func(x int) (rune, int)) string {
	var b, run strings.Builder
	cur := -1
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if cur > 0 && cur < len(pens) {
			pens[cur].Write(&b, run.String())
		} else {
			b.WriteString(run.String())
		}
		run.Reset()
	}
	for x := range w {
		r, p := cell(x)
		if r == ' ' {
			p = 0
		}
		if p != cur {
			flush()
			cur = p
		}
		run.WriteRune(r)
	}
	flush()
	return b.String()
}

// HasDots reports whether cell (x, y) has braille dots.
func (g *Grid) HasDots(x, y int) bool {
	if x < 0 || y < 0 || x >= g.W || y >= g.H {
		return false
	}
	return g.dots[y*g.W+x] != 0
}
