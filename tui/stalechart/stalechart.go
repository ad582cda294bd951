package stalechart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Model is a run's staleness chart, cached until the run or the size
// changes.
type Model struct {
	styles *common.Styles
	ascii  bool
	w, h   int

	cache runstate.ViewCache
}

// New returns a staleness chart drawing with c's styles and options.
func New(c *common.Common) *Model {
	return &Model{styles: c.Styles, ascii: c.Opts.ASCII}
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Height returns the lines the chart needs for a run: a title, a column
// header and one line per layer.
func Height(r *runstate.Run) int { return 2 + len(layers(r)) }

// View draws the chart (cached while nothing changed).
func (m *Model) View(r *runstate.Run) string {
	return m.cache.View(r, m.w, m.h, 0, func() string { return strings.Join(draw.Block(m.render(r), m.w, m.h), "\n") })
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

func (m *Model) render(r *runstate.Run) []string {
	muted := draw.PenOf(m.styles.Muted)
	out := []string{m.styles.Header.Render("Staleness") + muted.Paint("  age of pulled history rows, in optimizer steps")}
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
		bw = min(max((m.w-fixedW)/nb, minBar), maxBar)
	}
	shown := nb
	if bw > 0 && fixedW+shown*bw > m.w {
		shown = max((m.w-fixedW)/bw, 0)
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
