package compare

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/plot"
)

// ttaMarkers tell runs apart without color, as the overlay's do.
var ttaMarkers = []rune{'*', '+', 'o', 'x', '#', '@'}

// ttaMinTable is how many table rows the chart leaves at least.
const ttaMinTable = 8

// pane draws one chart under the table in w×h.
type pane func(w, h int) []string

// panes are the charts under the table: time to accuracy when a run
// recorded validation accuracy, the speedup waterfall when a session
// holds a baseline and an optimized run.
func (m *Model) panes() []pane {
	if m.cmp == nil {
		return nil
	}
	var out []pane
	if m.cmp.TTA != nil {
		out = append(out, m.ttaView)
	}
	if len(m.cmp.Waterfalls) > 0 {
		out = append(out, m.waterfallView)
	}
	return out
}

// panesHeight returns the lines the charts take under the table (0:
// none): a third of the screen, 6 to 16 lines, when there is a chart and
// the table keeps ttaMinTable rows beside the others lines.
func (m *Model) panesHeight(others int) int {
	if len(m.panes()) == 0 {
		return 0
	}
	h := min(max(m.height/3, 6), 16)
	if m.height-others-h < ttaMinTable+3 {
		return 0
	}
	return h
}

// paneMinWidth is the narrowest a chart is drawn beside another; on a
// narrower screen one chart shows at a time and the NextChart key
// (w) turns to the next.
const paneMinWidth = 70

// panesView draws the charts side by side in w×h, a column each, or the
// current one alone when they do not fit.
func (m *Model) panesView(w, h int) []string {
	ps := m.panes()
	if len(ps) == 1 || w < len(ps)*paneMinWidth+len(ps)-1 {
		return ps[m.chart%len(ps)](w, h)
	}
	widths := make([]int, len(ps))
	blocks := make([][]string, len(ps))
	cw := (w - (len(ps) - 1)) / len(ps)
	for i, p := range ps {
		widths[i] = cw
		if i == len(ps)-1 {
			widths[i] = w - (len(ps)-1)*(cw+1)
		}
		blocks[i] = p(widths[i], h)
	}
	return draw.Columns(h, " ", widths, blocks...)
}

// ttaView draws the validation accuracy of the compared runs over wall
// time from the first touch of data (or over epochs, the TTAAxis key),
// overlaid and smoothed as the dashboard's charts are, with the target as
// a rule and each run's time (or epochs) to accuracy in the legend and
// marked where it was reached.
func (m *Model) ttaView(w, h int) []string {
	st := m.c.Styles
	c := m.cmp
	tr := plot.Transform{EMA: plot.Smoothing[m.smooth]}
	cells := m.c.Opts.ASCII || !st.Glyphs.Braille || m.c.Opts.NoColor
	pens := []draw.Pen{{}}
	for i := range c.Runs {
		pens = append(pens, draw.PenOf(st.SeriesStyle(i)))
	}
	muted := draw.PenOf(st.Muted)
	pens = append(pens, muted)
	penMuted := len(pens) - 1
	marker := func(i int) rune { return ttaMarkers[i%len(ttaMarkers)] }

	head := st.Header.Render("Time to accuracy")
	if m.byEpoch {
		head = st.Header.Render("Epochs to accuracy")
	}
	x := func(p analysis.AccPoint) float64 {
		if m.byEpoch {
			return float64(p.Epoch)
		}
		return p.TimeS
	}
	if l := tr.Label(); l != "" {
		head += muted.Paint(" (" + l + ")")
	}
	head += muted.Paint("  target val acc " + strconv.FormatFloat(c.TTA.Target, 'f', 4, 64) + ": " + c.TTA.TargetFrom)
	xmax, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	var legend []string
	for i := range c.Runs {
		r := &c.Runs[i]
		mark := string(marker(i))
		if !cells {
			mark = st.Glyphs.Full
		}
		legend = append(legend, pens[i+1].Paint(mark)+" "+r.Label+" "+ttaText(r, m.byEpoch))
		for _, p := range r.AccCurve {
			xmax = max(xmax, x(p))
			lo, hi = min(lo, p.ValAcc), max(hi, p.ValAcc)
		}
	}
	out := []string{draw.Cut(head, w, st.Glyphs.Ellipsis), draw.Cut(strings.Join(legend, "  "), w, st.Glyphs.Ellipsis)}
	if math.IsInf(lo, 1) {
		return append(out, muted.Paint("no validation accuracy yet"))
	}
	// accuracy on [0, 1], wider only for values outside it
	lo, hi = min(lo, c.TTA.Target, 0), max(hi, c.TTA.Target, 1)
	top, bottom := draw.Num(hi), draw.Num(lo)
	lw := max(len(top), len(bottom))
	pw, ph := w-lw-1, h-3
	if pw < 4 || ph < 2 {
		return out
	}
	cv := plot.New(plot.Area{W: pw, H: ph, X0: 0, X1: max(xmax, 1e-9), Y0: lo, Y1: hi, Cells: cells})
	for i := range c.Runs {
		r := &c.Runs[i]
		xs, vs := make([]float64, len(r.AccCurve)), make([]float64, len(r.AccCurve))
		for j, p := range r.AccCurve {
			xs[j], vs[j] = x(p), p.ValAcc
		}
		cv.Line(xs, tr.Apply(vs), i+1, marker(i))
	}
	rule := '-'
	if !m.c.Opts.ASCII {
		rule = '┄'
	}
	cv.Rule(c.TTA.Target, rule, penMuted)
	for i := range c.Runs {
		if t := c.Runs[i].TTA; t != nil && t.Reached {
			cv.Mark(x(analysis.AccPoint{Epoch: t.Epoch, TimeS: t.TimeS}), c.TTA.Target, marker(i), i+1)
		}
	}
	for y, l := range cv.Lines(pens) {
		lab := ""
		switch y {
		case 0:
			lab = top
		case ph - 1:
			lab = bottom
		}
		out = append(out, muted.Paint(draw.PadLeft(lab, lw)+st.Glyphs.VLine)+l)
	}
	left, right := "0 s", strconv.FormatFloat(xmax, 'f', 2, 64)+" s wall from the first touch of data"
	if m.byEpoch {
		left, right = "epoch 0", "epoch "+strconv.Itoa(int(math.Round(xmax)))
	}
	axis := strings.Repeat(" ", lw+1) + left
	if gap := pw - len(left) - len(right); gap > 0 {
		axis += strings.Repeat(" ", gap) + right
	}
	return append(out, muted.Paint(axis))
}

// ttaText is a run's time to accuracy in the legend: "12.3 s", with the
// speedup to accuracy beside the baseline's, or "not reached"; by epoch,
// the epoch that reached the target ("epoch 7 1.29x").
func ttaText(r *sessions.RunFigures, byEpoch bool) string {
	t := r.TTA
	switch {
	case t == nil || t.Evaluated == 0:
		return "-"
	case !t.Reached:
		return "not reached"
	case byEpoch && t.EpochsSpeedup > 0 && math.Abs(t.EpochsSpeedup-1) > 1e-9:
		return "epoch " + strconv.Itoa(t.Epoch) + " " + strconv.FormatFloat(t.EpochsSpeedup, 'f', 2, 64) + "x"
	case byEpoch:
		return "epoch " + strconv.Itoa(t.Epoch)
	case t.Speedup > 0 && math.Abs(t.Speedup-1) > 1e-9:
		return strconv.FormatFloat(t.TimeS, 'f', 2, 64) + " s " + strconv.FormatFloat(t.Speedup, 'f', 2, 64) + "x"
	}
	return strconv.FormatFloat(t.TimeS, 'f', 2, 64) + " s"
}
