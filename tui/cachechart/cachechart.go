package cachechart

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

// Pen indexes.
const (
	penRate = iota + 1
	penRule
	penAxis
)

// Model is a run's hit-rate chart, cached until the run's cache events
// or the size change.
type Model struct {
	styles *common.Styles
	cells  bool // marker characters instead of braille
	w, h   int
	pens   []draw.Pen

	cache runstate.Cache[key]
}

// key is what a drawing depends on: the run's cache events (counted,
// folded ones too) and the size; other events do not redraw it.
type key struct {
	run     *runstate.Run
	changes uint64
	w, h    int
}

// New returns a hit-rate chart drawing with c's styles and options.
func New(c *common.Common) *Model {
	st := c.Styles
	return &Model{styles: st, cells: c.Opts.ASCII || !st.Glyphs.Braille,
		pens: []draw.Pen{{}, draw.PenOf(st.SeriesStyle(1)), draw.PenOf(st.Budget), draw.PenOf(st.Muted)}}
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View draws the chart, cached while the run's cache events and the size
// stay the same.
func (m *Model) View(r *runstate.Run) string {
	if r == nil || m.w <= 0 || m.h <= 0 {
		return ""
	}
	return m.cache.View(m.key(r), func() string { return strings.Join(draw.Block(m.render(r), m.w, m.h), "\n") })
}

// key is the key of a drawing of r at the chart's size.
func (m *Model) key(r *runstate.Run) key {
	return key{run: r, changes: r.FeatCache.Changes, w: m.w, h: m.h}
}

// Pct writes a rate as a percentage with one decimal ("72.5%"), "-" for
// NaN.
func Pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// LastEpoch returns the last epoch with points and its hit rate (NaN
// without rows).
func LastEpoch(c *runstate.FeatCache) (epoch int32, rate float64) {
	n := c.Len()
	if n == 0 {
		return 0, math.NaN()
	}
	epoch = c.Epoch[n-1]
	var hits, all float64
	for i := n - 1; i >= 0 && c.Epoch[i] == epoch; i-- {
		hits += float64(c.Hits[i])
		all += float64(c.Hits[i]) + float64(c.Misses[i])
	}
	if all == 0 {
		return epoch, math.NaN()
	}
	return epoch, hits / all
}

// header names the chart and its figures, as many as fit the width.
func (m *Model) header(c *runstate.FeatCache) string {
	head := m.styles.Header.Render("Cache hit rate")
	if c.Len() == 0 {
		return head + m.pens[penAxis].Paint("  no cache events yet")
	}
	parts := []string{m.pens[penRule].Paint(m.ruleGlyph()) + " " + Pct(c.Rate())}
	ep, rate := LastEpoch(c)
	if c.Epoch[0] != ep {
		parts = append(parts, "ep "+strconv.Itoa(int(ep))+" "+Pct(rate))
	}
	parts = append(parts, "H2D "+units.BytesFine(c.TotalH2D))
	out := head
	for _, p := range parts {
		if draw.Width(out+"  "+p) > m.w {
			break
		}
		out += "  " + p
	}
	return out
}

func (m *Model) ruleGlyph() string {
	if m.cells {
		return "-"
	}
	return m.styles.Glyphs.Budget
}

// labels are the y axis' labels: 100% at the top, 0% at the bottom.
var labels = [2]string{"100%", "0%"}

func (m *Model) render(r *runstate.Run) []string {
	c := &r.FeatCache
	out := []string{draw.Cut(m.header(c), m.w, m.styles.Glyphs.Ellipsis)}
	ph := m.h - 2 // header and x axis
	n := c.Len()
	lw := len(labels[0])
	pw := m.w - lw - 1
	if ph < 1 || n == 0 || pw < 2 {
		return out
	}
	cv := plot.New(plot.Area{W: pw, H: ph, X0: 0, X1: float64(max(n-1, 1)), Y0: 0, Y1: 1, Cells: m.cells})
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range n {
		xs[i], ys[i] = float64(i), c.HitRate(i)
	}
	cv.Line(xs, ys, penRate, '*')
	ruleRow := -1
	if rate := c.Rate(); !math.IsNaN(rate) {
		cv.Rule(rate, []rune(m.ruleGlyph())[0], penRule)
		ruleRow = cv.Row(rate)
	}
	vline := m.styles.Glyphs.VLine
	for y, l := range cv.Lines(m.pens) {
		label := ""
		switch {
		case y == 0:
			label = labels[0]
		case y == ph-1:
			label = labels[1]
		case y == ruleRow:
			label = strconv.Itoa(int(math.Round(100*c.Rate()))) + "%"
		}
		out = append(out, m.pens[penAxis].Paint(draw.PadLeft(label, lw)+vline)+l)
	}
	return append(out, m.pens[penAxis].Paint(strings.Repeat(" ", lw+1)+axis(c, pw)))
}

// axis labels the x axis in w cells: the first and last epoch of the
// points and how many batches there are ("ep 1   600 batches   ep 3").
func axis(c *runstate.FeatCache, w int) string {
	n := c.Len()
	left, mid, right := "ep "+strconv.Itoa(int(c.Epoch[0])), strconv.Itoa(n)+" batches", ""
	if last := c.Epoch[n-1]; last != c.Epoch[0] {
		right = "ep " + strconv.Itoa(int(last))
	}
	return draw.AxisLabels(left, mid, right, w)
}
