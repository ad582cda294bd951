package dashboard

import (
	"strconv"
	"strings"

	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/sparkline"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// gpuLaneHeight is the lines of the GPU lane: utilization and memory.
const gpuLaneHeight = 2

// gpuLane caches a run's GPU lane: sparklines of the gpu samples'
// utilization and device memory under the timeline.
type gpuLane struct {
	n, w  int // samples and width drawn
	last  int64
	lines []string
}

// view draws the lane in w columns (cached while no sample came).
func (l *gpuLane) view(m *Model, r *runstate.Run, w int) []string {
	g := &r.GPUs
	n := g.Len()
	if n == 0 {
		return nil
	}
	if l.lines != nil && l.n == n && l.w == w && l.last == g.T[n-1] {
		return l.lines
	}
	l.n, l.w, l.last = n, w, g.T[n-1]
	st := m.c.Styles
	const label = 9 // "GPU util " / "GPU mem  "
	util := make([]float64, n)
	used := make([]float64, n)
	total := int64(0)
	for i := range n {
		util[i] = max(g.Util[i], 0) // -1: not measured
		total = max(total, g.Total[i], g.Used[i])
		used[i] = float64(g.Used[i])
	}
	if total > 0 {
		for i := range used {
			used[i] /= float64(total)
		}
	}
	utilText := "n/a"
	if u := g.Util[n-1]; u >= 0 {
		utilText = strconv.Itoa(int(u*100+0.5)) + "%"
	}
	memText := units.BytesFine(g.Used[n-1])
	if total > 0 {
		memText += " / " + units.BytesFine(total)
	}
	tail := max(len(utilText), draw.Width(memText)) + 1
	sw := w - label - tail
	pen := draw.PenOf(st.SeriesStyle(2))
	memPen := draw.PenOf(st.SeriesStyle(4))
	muted := draw.PenOf(st.Muted)
	if sw < 4 { // too narrow for sparklines: the figures only
		l.lines = []string{draw.Cut(muted.Paint("GPU ")+utilText+"  "+memText, w, st.Glyphs.Ellipsis)}
		return l.lines
	}
	l.lines = []string{
		muted.Paint("GPU util ") + pen.Paint(m.spark(util, sw)) + " " + utilText,
		muted.Paint("GPU mem  ") + memPen.Paint(m.spark(used, sw)) + " " + memText,
	}
	return l.lines
}

// spark draws fractions in [0, 1] as a one-line sparkline of w cells,
// folded to the column means: ntcharts' sparkline, or the ASCII levels
// of Glyphs.Spark with --ascii.
func (m *Model) spark(vs []float64, w int) string {
	cols := foldMeans(vs, w)
	if !m.c.Styles.Glyphs.Braille || m.c.Opts.ASCII {
		levels := m.c.Styles.Glyphs.Spark
		var b strings.Builder
		for _, v := range cols {
			b.WriteString(levels[min(int(v*float64(len(levels)-1)+0.5), len(levels)-1)])
		}
		return draw.PadRight(b.String(), w)
	}
	s := sparkline.New(w, 1, sparkline.WithMaxValue(1), sparkline.WithNoAutoMaxValue())
	s.PushAll(cols)
	s.DrawColumnsOnly()
	var b strings.Builder
	for x := range w {
		r := s.Canvas.Cell(canvas.Point{X: x, Y: 0}).Rune
		if r == 0 {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// foldMeans resamples vs to w values spanning the whole series: each
// the mean of its share, or with fewer values than w, each value
// repeated over its share of the columns.
func foldMeans(vs []float64, w int) []float64 {
	n := len(vs)
	out := make([]float64, w)
	if n < w {
		for x := range w {
			out[x] = vs[x*n/w]
		}
		return out
	}
	for x := range w {
		j0, j1 := x*n/w, (x+1)*n/w
		sum := 0.0
		for _, v := range vs[j0:j1] {
			sum += v
		}
		out[x] = sum / float64(max(j1-j0, 1))
	}
	return out
}
