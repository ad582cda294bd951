package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
)

// waterfallChart draws a session's speedup waterfall (sessions.Compare's,
// computed by the what-if package) as horizontal bars on a log scale,
// one line a step: each part from the cumulative speedup before it to
// the one after, the interaction up to the total, then the total from
// 1×. A predicted part is drawn with a lighter glyph and says so; a part
// that slows down is drawn in the warning style.
func waterfallChart(c *common.Common, w *sessions.SessionWaterfall, width int) []string {
	st := c.Styles
	title := fmt.Sprintf("waterfall: %s over %s (log scale; parts × interaction = total)", w.Optimized, w.Baseline)
	out := []string{"", st.Header.Render(draw.Cut(title, width, st.Glyphs.Ellipsis))}
	lo, hi := 1.0, 1.0
	nameW := len("interaction")
	for _, b := range w.Bars {
		lo, hi = min(lo, b.From, b.To), max(hi, b.From, b.To)
		nameW = max(nameW, len(b.Name))
	}
	nameW = min(nameW, 16)
	const figW, srcW = 8, 13 // " 1.406x ", " [1.36, 1.45]"
	barW := width - nameW - figW - srcW - 3
	if barW < 8 {
		barW = 0 // too narrow for bars: figures only
	}
	x := func(v float64) int {
		if hi <= lo {
			return 0
		}
		return int(math.Round((math.Log(v) - math.Log(lo)) / (math.Log(hi) - math.Log(lo)) * float64(barW)))
	}
	for _, b := range w.Bars {
		line := draw.PadRight(draw.Cut(b.Name, nameW, st.Glyphs.Ellipsis), nameW) + " " + draw.PadLeft(fmt.Sprintf("%.3fx", b.Speedup), figW-1) + " "
		if barW > 0 {
			line += st.Border.Render(st.Glyphs.VLine) + waterfallBar(c, b, x(b.From), x(b.To), barW)
		}
		out = append(out, line+" "+waterfallSource(c, b))
	}
	return out
}

// waterfallBar draws one bar of barW cells from column a to column b.
func waterfallBar(c *common.Common, b whatif.Bar, a, e, barW int) string {
	st := c.Styles
	from, to := min(a, e), max(a, e)
	if to == from && b.Log != 0 {
		to = min(from+1, barW) // a step too small to see still shows
		from = to - 1
	}
	glyph := st.Glyphs.Full
	if b.Predicted {
		glyph = "▒"
		if c.Opts.ASCII {
			glyph = "~"
		}
	}
	bar := strings.Repeat(glyph, to-from)
	switch {
	case b.Total:
		bar = st.Title.Render(bar)
	case b.Log < 0:
		bar = st.Warn.Render(bar)
	case b.Name == "interaction":
		bar = st.Muted.Render(bar)
	default:
		bar = st.OK.Render(bar)
	}
	return strings.Repeat(" ", from) + bar + strings.Repeat(" ", barW-to)
}

// waterfallSource is a bar's short source label.
func waterfallSource(c *common.Common, b whatif.Bar) string {
	switch {
	case b.Unknown:
		return c.Styles.Muted.Render("unknown")
	case b.Predicted:
		return c.Styles.Warn.Render("predicted")
	case b.Name == "interaction" && !b.Total:
		return c.Styles.Muted.Render("remainder")
	}
	if b.Lo > 0 && b.Hi > 0 {
		return c.Styles.Muted.Render(fmt.Sprintf("[%.2f, %.2f]", b.Lo, b.Hi))
	}
	return c.Styles.Muted.Render("measured")
}

// waterfallView draws every compared session's waterfall in w×h.
func (m *Model) waterfallView(w, h int) []string {
	var out []string
	for i := range m.cmp.Waterfalls {
		out = append(out, waterfallChart(m.c, &m.cmp.Waterfalls[i], w)...)
	}
	return out[:min(len(out), h)]
}
