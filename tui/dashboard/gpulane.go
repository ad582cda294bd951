package dashboard

import (
	"slices"
	"strconv"
	"strings"

	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/sparkline"

	"github.com/gnnscope/gnnscope/profile/gpubreak"
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

// height returns the lines of the lane: the samples' two, and one for
// the GPU's own breakdown when the run has device-side spans.
func (l *gpuLane) height(r *runstate.Run) int {
	h := 0
	if r.GPUs.Len() > 0 {
		h = gpuLaneHeight
	}
	if r.GPUWork.Breakdown() != nil {
		h++
	}
	return h
}

// view draws the lane in w columns: the samples' sparklines (cached
// while no sample came), then the breakdown's line.
func (l *gpuLane) view(m *Model, r *runstate.Run, w int) []string {
	lines := l.samples(m, r, w)
	if b := r.GPUWork.Breakdown(); b != nil {
		lines = append(slices.Clip(lines), breakdownLine(m, b, w))
	}
	return lines
}

// breakdownLine sums up the GPU's own breakdown over the steps: shares
// of the steps' GPU windows and the kernel that took the most time.
func breakdownLine(m *Model, b *gpubreak.Breakdown, w int) string {
	st := m.c.Styles
	t := b.Total
	pct := func(v int64) string {
		if t.Window <= 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(v)/float64(t.Window), 'f', 0, 64) + "%"
	}
	s := draw.PenOf(st.Muted).Paint("GPU steps ") + "idle " + pct(t.Idle) + "  computing " + pct(t.Compute) +
		"  copying " + pct(t.Copy) + "  both " + pct(t.Overlap)
	if b.Launched > 0 {
		s += "  short kernels " + strconv.Itoa(b.Short) + "/" + strconv.Itoa(b.Launched)
	}
	if len(b.Top) > 0 {
		s += "  top " + b.Top[0].Name
	}
	return draw.Cut(s, w, st.Glyphs.Ellipsis)
}

// samples draws the samples' sparklines (none without samples).
func (l *gpuLane) samples(m *Model, r *runstate.Run, w int) []string {
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
