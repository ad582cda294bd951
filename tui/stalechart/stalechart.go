package stalechart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Model is a run's staleness chart, cached until the run's stale and
// hist_err events or the size change.
type Model struct {
	styles *common.Styles
	ascii  bool
	cells  bool // the series plot in marker characters, not braille
	w, h   int
	pens   []draw.Pen

	cache runstate.Cache[key]
}

// key is what a drawing depends on: the layers' stale events (counted)
// and last history errors, and the size; other events do not redraw it.
type key struct {
	run    *runstate.Run
	events int64
	errs   uint64 // a hash of the layers' RelErr bits
	w, h   int
}

// New returns a staleness chart drawing with c's styles and options.
func New(c *common.Common) *Model {
	m := &Model{styles: c.Styles, ascii: c.Opts.ASCII, cells: c.Opts.ASCII || !c.Styles.Glyphs.Braille}
	m.pens = []draw.Pen{{}}
	for i := range 8 {
		m.pens = append(m.pens, draw.PenOf(c.Styles.SeriesStyle(i)))
	}
	m.pens = append(m.pens, draw.PenOf(c.Styles.Muted))
	return m
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// tableHeight is the histogram table's height: a title, a column header
// and one line per layer.
func tableHeight(r *runstate.Run) int { return 2 + len(layers(r)) }

// Height returns the lines the chart wants for a run in w columns: the
// histogram table and the plot over batches (a title, plotRows rows and
// an axis), beside each other from BesideWidth columns on, else one under
// the other.
func Height(r *runstate.Run, w int) int {
	if w >= BesideWidth {
		return max(tableHeight(r), plotRows+2)
	}
	return tableHeight(r) + plotRows + 2
}

// View draws the chart, cached while the stale and hist_err events and
// the size stay the same.
func (m *Model) View(r *runstate.Run) string {
	if r == nil || m.w <= 0 || m.h <= 0 {
		return ""
	}
	return m.cache.View(m.key(r), func() string { return strings.Join(draw.Block(m.layout(r), m.w, m.h), "\n") })
}

// key is the key of a drawing of r at the chart's size.
func (m *Model) key(r *runstate.Run) key {
	k := key{run: r, w: m.w, h: m.h}
	for i := range r.Layers {
		k.events += r.Layers[i].Events
		k.errs = k.errs*31 + math.Float64bits(r.Layers[i].RelErr)
	}
	return k
}

// BesideWidth is the width from which the plot over batches goes beside
// the histogram table, the table taking at most half.
const BesideWidth = 100

// Layout bounds: the plot wants plotRows rows, and goes under the table
// when the height leaves it at least minPlot lines.
const (
	plotRows = 6
	minPlot  = 5
)

// layout places the histogram table and the plot over batches: side by
// side when wide, else the plot under the table when both fit, the table
// alone when only it fits, else the plot alone when it fits, else the
// table cut.
func (m *Model) layout(r *runstate.Run) []string {
	w, h := m.w, m.h
	th := tableHeight(r)
	if len(layers(r)) == 0 || !hasPoints(r) {
		return m.render(r, w)
	}
	if w >= BesideWidth && h >= minPlot {
		tw := min(w/2, tableWidth(r))
		pw := w - tw - 1
		return draw.Columns(h, " ", []int{tw, pw}, m.render(r, tw), m.series(r, pw, h))
	}
	switch {
	case h >= th+minPlot:
		return append(m.render(r, w), m.series(r, w, h-th)...)
	case h < th && h >= minPlot:
		return m.series(r, w, h)
	}
	return m.render(r, w)
}

// layers returns the indexes of the layers that have stale or hist_err
// events.
func layers(r *runstate.Run) []int {
	var out []int
	for i := range r.Layers {
		if l := &r.Layers[i]; l.Events > 0 || !math.IsNaN(l.RelErr) {
			out = append(out, i)
		}
	}
	return out
}

// BucketLabel names age bucket k: 0, 1, 2-3, 4-7, 8-15, ...
func BucketLabel(k int) string {
	if k <= 1 {
		return strconv.Itoa(k)
	}
	if k > 62 {
		return "huge"
	}
	lo := int64(1) << (k - 1)
	return strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(2*lo-1, 10)
}

// eighths are the partial blocks of a bar, 1/8 to 7/8.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws a fraction f of w cells.
func (m *Model) bar(f float64, w int) string {
	if w <= 0 || !(f > 0) {
		return ""
	}
	f = min(f, 1)
	if m.ascii {
		n := int(math.Round(f * float64(w)))
		if n == 0 {
			return "."
		}
		return strings.Repeat("#", n)
	}
	e := int(math.Round(f * float64(w) * 8))
	if e == 0 {
		return eighths[1]
	}
	s := strings.Repeat("█", e/8)
	if e%8 > 0 {
		s += eighths[e%8]
	}
	return s
}

const (
	colLayer = 6
	colMean  = 7
	colMax   = 6
	colErr   = 7
	fixedW   = colLayer + colMean + colMax + colErr
	minBar   = 4
	maxBar   = 24
)

// tableWidth is the table's width with the widest bars.
func tableWidth(r *runstate.Run) int {
	nb := 0
	for _, i := range layers(r) {
		nb = max(nb, len(r.Layers[i].Hist))
	}
	return fixedW + nb*maxBar
}

// render draws the histogram table in w columns.
func (m *Model) render(r *runstate.Run, w int) []string {
	muted := draw.PenOf(m.styles.Muted)
	out := []string{draw.Cut(m.styles.Header.Render("Staleness")+muted.Paint("  age of pulled history rows, in optimizer steps"), w, m.styles.Glyphs.Ellipsis)}
	ls := layers(r)
	if len(ls) == 0 {
		return []string{m.styles.Header.Render("Staleness") + muted.Paint("  no stale events")}
	}
	nb := 0
	for _, i := range ls {
		nb = max(nb, len(r.Layers[i].Hist))
	}
	bw := 0
	if nb > 0 {
		bw = min(max((w-fixedW)/nb, minBar), maxBar)
	}
	shown := nb
	if bw > 0 && fixedW+shown*bw > w {
		shown = max((w-fixedW)/bw, 0)
	}
	var b strings.Builder
	b.WriteString(draw.PadRight("layer", colLayer) + draw.PadLeft("mean", colMean-1) + " " + draw.PadLeft("max", colMax-1) + " " + draw.PadLeft("err", colErr-1) + " ")
	for k := 0; k < shown; k++ {
		label := BucketLabel(k)
		if k == shown-1 && shown < nb {
			label = strconv.FormatInt(int64(1)<<max(k-1, 0), 10) + "+"
		}
		b.WriteString(draw.PadRight(label, bw))
	}
	out = append(out, muted.Paint(b.String()))
	for n, i := range ls {
		l := &r.Layers[i]
		b.Reset()
		pen := draw.PenOf(m.styles.SeriesStyle(n))
		b.WriteString(pen.Paint(draw.PadRight(strconv.Itoa(i), colLayer)))
		errS := "-"
		if !math.IsNaN(l.RelErr) {
			errS = strconv.FormatFloat(l.RelErr, 'f', 3, 64)
		}
		b.WriteString(draw.PadLeft(strconv.FormatFloat(l.Mean(), 'f', 2, 64), colMean-1) + " ")
		b.WriteString(draw.PadLeft(strconv.FormatFloat(l.Max, 'f', 0, 64), colMax-1) + " ")
		b.WriteString(draw.PadLeft(errS, colErr-1) + " ")
		var total int64
		for _, c := range l.Hist {
			total += c
		}
		for k := 0; k < shown; k++ {
			var c int64
			if k < len(l.Hist) {
				c = l.Hist[k]
			}
			if k == shown-1 && shown < nb {
				for _, rest := range l.Hist[min(k+1, len(l.Hist)):] {
					c += rest
				}
			}
			f := 0.0
			if total > 0 {
				f = float64(c) / float64(total)
			}
			b.WriteString(draw.PadRight(pen.Paint(m.bar(f, bw-1)), bw))
		}
		out = append(out, b.String())
	}
	return out
}
