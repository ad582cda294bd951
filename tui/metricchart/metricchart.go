package metricchart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// markers tell series apart without color.
var markers = []rune{'*', '+', 'o', 'x', '#', '@'}

// Model is a chart of some of a run's metrics, cached until the run or
// the size changes.
type Model struct {
	styles   *common.Styles
	cellMode bool // draw with marker characters, not braille
	title    string
	names    []string // the series, in legend order
	fallback []string // drawn when names have fewer than two points
	unit01   bool     // values in [0, 1] keep the range [0, 1]
	w, h     int
	pens     []draw.Pen
	tr       plot.Transform // smoothing and log scale

	cache runstate.Cache[dataKey]
}

// New returns a chart titled title of the named metrics.
func New(c *common.Common, title string, names ...string) *Model {
	m := &Model{styles: c.Styles, title: title, names: names,
		cellMode: c.Opts.ASCII || !c.Styles.Glyphs.Braille || (c.Opts.NoColor && len(names) > 1)}
	m.pens = []draw.Pen{{}}
	for i := range 8 {
		m.pens = append(m.pens, draw.PenOf(c.Styles.SeriesStyle(i)))
	}
	m.pens = append(m.pens, draw.PenOf(c.Styles.Muted))
	return m
}

// Fallback sets metrics to draw instead while the chart's own have fewer
// than two points (e.g. the per-batch loss before the first epoch ends).
func (m *Model) Fallback(names ...string) *Model {
	m.fallback = names
	return m
}

// Unit keeps the range [0, 1] while every value is in it (accuracies).
func (m *Model) Unit() *Model { m.unit01 = true; return m }

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetTransform sets the smoothing and the log scale the values are
// drawn with; the title names them.
func (m *Model) SetTransform(t plot.Transform) { m.tr = t }

// View draws the chart, cached while its series, the size and the
// transform stay the same: events of other kinds (spans) do not redraw
// it.
func (m *Model) View(r *runstate.Run) string {
	if r == nil || m.w <= 0 || m.h <= 0 {
		return ""
	}
	k := dataKey{run: r, epochs: r.Epochs, w: m.w, h: m.h, tr: m.tr.Key()}
	for _, names := range [][]string{m.names, m.fallback} {
		for _, n := range names {
			if s := r.Metric(n); s != nil {
				k.points = k.points*31 + s.Changes + 1
			}
		}
	}
	return m.cache.View(k, func() string { return strings.Join(draw.Block(m.render(r), m.w, m.h), "\n") })
}

// dataKey is what a drawing of the chart depends on.
type dataKey struct {
	run      *runstate.Run
	points   uint64 // a hash of the drawn series' Changes
	epochs   int
	w, h, tr int
}

// series picks what to draw: the chart's metrics, or the fallback while
// they have fewer than two points.
func (m *Model) series(r *runstate.Run) []*runstate.Series {
	pick := func(names []string) ([]*runstate.Series, int) {
		var out []*runstate.Series
		most := 0
		for _, n := range names {
			if s := r.Metric(n); s != nil && s.Len() > 0 {
				out = append(out, s)
				most = max(most, s.Len())
			}
		}
		return out, most
	}
	ss, most := pick(m.names)
	if most < 2 && len(m.fallback) > 0 {
		if fs, fm := pick(m.fallback); fm > most {
			return fs
		}
	}
	return ss
}

// label is a series' name in the legend: "val" for "val_acc".
func label(name string) string {
	if s, ok := strings.CutSuffix(name, "_acc"); ok {
		return s
	}
	return name
}

func (m *Model) marker(i int) string {
	if m.cellMode {
		return string(markers[i%len(markers)])
	}
	return "●"
}

func (m *Model) render(r *runstate.Run) []string {
	muted := m.pens[len(m.pens)-1]
	ss := m.series(r)
	var hb strings.Builder
	hb.WriteString(m.styles.Header.Render(m.title))
	if l := m.tr.Label(); l != "" {
		hb.WriteString(muted.Paint(" (" + l + ")"))
	}
	if len(ss) == 0 {
		hb.WriteString(muted.Paint("  " + r.NoMetricText(strings.Join(m.names, ", "))))
		return []string{draw.Cut(hb.String(), m.w, "")}
	}
	for i, s := range ss {
		hb.WriteString("  " + m.pens[1+i%8].Paint(m.marker(i)) + " " + label(s.Name) + " " + draw.Num(s.Last()))
	}
	out := []string{draw.Cut(hb.String(), m.w, m.styles.Glyphs.Ellipsis)}
	ph := m.h - 2
	if ph < 1 {
		return out
	}
	// the values drawn: smoothed, in log10 on a log scale
	for i, s := range ss {
		c := *s
		c.Value = m.tr.Apply(s.Value)
		ss[i] = &c
	}
	// x: epochs 1..E for epoch-level series, else batch indexes
	byEpoch := ss[0].Batch[0] < 0
	xmin, xmax, lo, hi := m.ranges(r, ss, byEpoch)
	top, bottom := draw.Num(hi), draw.Num(lo)
	if m.tr.Log {
		top, bottom = draw.Num(math.Pow(10, hi)), draw.Num(math.Pow(10, lo))
	}
	lw := max(len(top), len(bottom))
	pw := m.w - lw - 1
	if pw < 2 {
		return out
	}
	var lines []string
	if m.cellMode {
		lines = m.cells(ss, byEpoch, pw, ph, xmin, xmax, lo, hi)
	} else {
		c := plot.New(plot.Area{W: pw, H: ph, X0: float64(xmin), X1: float64(xmax), Y0: lo, Y1: hi})
		for i, s := range ss {
			xs, ys := points(s, byEpoch)
			c.Line(xs, ys, 1+i%8, markers[i%len(markers)])
		}
		lines = c.Lines(m.pens)
	}
	for y, l := range lines {
		lab := ""
		switch y {
		case 0:
			lab = top
		case ph - 1:
			lab = bottom
		}
		out = append(out, muted.Paint(draw.PadLeft(lab, lw)+m.styles.Glyphs.VLine)+l)
	}
	first, last := "epoch "+strconv.Itoa(xmin), strconv.Itoa(xmax)
	if !byEpoch {
		first = "batch " + strconv.Itoa(xmin)
	}
	axis := strings.Repeat(" ", lw+1) + first
	if gap := pw - len(first) - len(last); gap > 0 {
		axis += strings.Repeat(" ", gap) + last
	}
	return append(out, muted.Paint(axis))
}

// ranges returns the x range (epochs or batch indexes) and the y range
// of the series.
func (m *Model) ranges(r *runstate.Run, ss []*runstate.Series, byEpoch bool) (xmin, xmax int, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		if byEpoch {
			for _, e := range s.Epoch {
				xmax = max(xmax, int(e))
			}
		} else {
			xmax = max(xmax, s.Len())
		}
		for _, v := range s.Value {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	xmin = 1
	if byEpoch {
		xmax = max(xmax, r.Epochs)
	}
	xmax = max(xmax, xmin+1)
	if math.IsInf(lo, 1) { // nothing finite
		lo, hi = 0, 1
	}
	switch {
	case m.tr.Log && hi == lo:
		lo, hi = lo-0.5, hi+0.5
	case m.tr.Log:
		pad := (hi - lo) * 0.05
		lo, hi = lo-pad, hi+pad
	case m.unit01 && lo >= 0 && hi <= 1:
		lo, hi = 0, 1
	case lo >= 0 && hi > 0:
		lo = 0
		hi *= 1.05
	case hi == lo:
		lo, hi = lo-1, hi+1
	default:
		pad := (hi - lo) * 0.05
		lo, hi = lo-pad, hi+pad
	}
	return xmin, xmax, lo, hi
}

// points returns a series' points: (epoch, value) of its epoch-level
// values, or (batch number from 1, value).
func points(s *runstate.Series, byEpoch bool) (xs, ys []float64) {
	xs, ys = make([]float64, 0, s.Len()), make([]float64, 0, s.Len())
	for j, v := range s.Value {
		x := float64(j + 1)
		if byEpoch {
			if s.Batch[j] >= 0 {
				continue // a batch-level value among epoch-level ones
			}
			x = float64(s.Epoch[j])
		}
		xs, ys = append(xs, x), append(ys, v)
	}
	return xs, ys
}

// cells draws the series with marker characters on the project's own
// grid (--ascii, or several series without color).
func (m *Model) cells(ss []*runstate.Series, byEpoch bool, pw, ph, xmin, xmax int, lo, hi float64) []string {
	g := draw.NewGrid(pw, ph)
	W, H := pw, ph
	xOf := func(x float64) int {
		return int(math.Round((x - float64(xmin)) / float64(xmax-xmin) * float64(W-1)))
	}
	yOf := func(v float64) int {
		return H - 1 - int(math.Round((v-lo)/(hi-lo)*float64(H-1)))
	}
	for i, s := range ss {
		m.plot(g, s, i, byEpoch, W, xOf, yOf)
	}
	return g.Lines(m.pens)
}

// plot draws series s (index i) on the grid: points joined by lines;
// batch-level series longer than the width are folded to column means.
func (m *Model) plot(g *draw.Grid, s *runstate.Series, i int, byEpoch bool, W int, xOf func(float64) int, yOf func(float64) int) {
	pen := 1 + i%8
	mk := markers[i%len(markers)]
	px, py, have := 0, 0, false
	point := func(x, y int) {
		if m.cellMode {
			if have {
				g.CellLine(px, py, x, y, mk, pen)
			} else {
				g.Set(x, y, mk, pen)
			}
		} else {
			if have {
				g.Line(px, py, x, y, pen)
			} else {
				g.Dot(x, y, pen)
			}
		}
		px, py, have = x, y, true
	}
	n := s.Len()
	if byEpoch || n <= W {
		for j := 0; j < n; j++ {
			v := s.Value[j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				have = false
				continue
			}
			x := float64(j + 1)
			if byEpoch {
				if s.Batch[j] >= 0 {
					continue // a batch-level value among epoch-level ones
				}
				x = float64(s.Epoch[j])
			}
			point(xOf(x), yOf(v))
		}
		return
	}
	for x := 0; x < W; x++ {
		j0, j1 := x*n/W, (x+1)*n/W
		sum, k := 0.0, 0
		for _, v := range s.Value[j0:j1] {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				sum += v
				k++
			}
		}
		if k == 0 {
			have = false
			continue
		}
		point(x, yOf(sum/float64(k)))
	}
}
