package overlay

import (
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// markers tell runs apart without color.
var markers = []rune{'*', '+', 'o', 'x', '#', '@'}

// Pens beyond the runs' (1..maxRuns).
const (
	maxRuns   = 8
	penMuted  = maxRuns + 1
	penBudget = maxRuns + 2
	penOOM    = maxRuns + 3
	penGuard  = maxRuns + 4
)

// Model is the overlay of a session's runs, cached until the drawn
// data, the size or the transform change.
type Model struct {
	styles *common.Styles
	cells  bool // marker characters: --ascii, or no color to tell runs apart
	w, h   int
	tr     plot.Transform // smoothing for every chart, log for the loss
	pens   []draw.Pen

	cache runstate.Cache[uint64]
}

// New returns an overlay drawing with c's styles and options.
func New(c *common.Common) *Model {
	st := c.Styles
	m := &Model{styles: st, cells: c.Opts.ASCII || !st.Glyphs.Braille || c.Opts.NoColor}
	m.pens = []draw.Pen{{}}
	for i := range maxRuns {
		m.pens = append(m.pens, draw.PenOf(st.SeriesStyle(i)))
	}
	m.pens = append(m.pens, draw.PenOf(st.Muted), draw.PenOf(st.Budget), draw.PenOf(st.OOM), draw.PenOf(st.Warn))
	return m
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetTransform sets the smoothing (every chart) and the log scale (the
// loss chart).
func (m *Model) SetTransform(t plot.Transform) { m.tr = t }

// marker is run i's legend mark.
func (m *Model) marker(i int) string {
	if m.cells {
		return string(markers[i%len(markers)])
	}
	return "●"
}

// pen is run i's pen index.
func pen(i int) int { return 1 + i%maxRuns }

// View draws the overlay of runs in w×h: loss and accuracy side by side
// (stacked below 70 columns) over memory.
func (m *Model) View(runs []*runstate.Run) string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	return m.cache.View(m.dataKey(runs), func() string { return strings.Join(draw.Block(m.render(runs), m.w, m.h), "\n") })
}

// dataKey hashes what a drawing depends on: the size, the transform
// and, per run, the counts of the events the charts draw (they only
// grow, or a replay starts the run again).
func (m *Model) dataKey(runs []*runstate.Run) uint64 {
	k := uint64(m.w)*1000003 + uint64(m.h)*10007 + uint64(m.tr.Key())
	mix := func(v int) { k = k*1099511628211 + uint64(v) + 1 }
	mix64 := func(v uint64) { k = k*1099511628211 + v + 1 }
	for _, r := range runs {
		mix(r.Epochs)
		mix64(r.Mem.Changes)
		mix(len(r.OOMs))
		mix(len(r.Guards))
		for _, s := range r.Metrics {
			mix64(s.Changes)
		}
		mix(int(r.Budget))
	}
	return k
}

func (m *Model) render(runs []*runstate.Run) []string {
	if m.h < 3 {
		return []string{m.styles.Header.Render("Overlay") + m.pens[penMuted].Paint("  too short")}
	}
	lossT := m.tr
	accT := plot.Transform{EMA: m.tr.EMA}
	memH := max(m.h/2, 3)
	if m.h < 9 {
		memH = 0
	}
	mh := m.h - memH
	var out []string
	if m.w >= 70 {
		lw := (m.w - 1) / 2
		out = draw.Columns(mh, " ", []int{lw, m.w - lw - 1},
			m.metricChart(runs, "Loss", lossNames, lossT, lw, mh), m.metricChart(runs, "Accuracy", accNames, accT, m.w-lw-1, mh))
	} else {
		lh := mh / 2
		out = append(m.metricChart(runs, "Loss", lossNames, lossT, m.w, lh), m.metricChart(runs, "Accuracy", accNames, accT, m.w, mh-lh)...)
	}
	if memH > 0 {
		out = append(out, m.memChart(runs, m.w, memH)...)
	}
	return out
}

// legend writes the title, the transform and one entry per run.
func (m *Model) legend(title string, tr plot.Transform, runs []*runstate.Run, w int, value func(*runstate.Run) string) string {
	var b strings.Builder
	b.WriteString(m.styles.Header.Render(title))
	if l := tr.Label(); l != "" {
		b.WriteString(m.pens[penMuted].Paint(" (" + l + ")"))
	}
	for i, r := range runs {
		b.WriteString("  " + m.pens[pen(i)].Paint(m.marker(i)) + " " + r.Name)
		if v := value(r); v != "" {
			b.WriteString(" " + v)
		}
	}
	return draw.Cut(b.String(), w, m.styles.Glyphs.Ellipsis)
}

// frame puts y labels left of the plot's lines and an x axis under them.
func (m *Model) frame(lines []string, top, bottom string, lw int, left, right string, pw int) []string {
	out := make([]string, 0, len(lines)+1)
	muted := m.pens[penMuted]
	for y, l := range lines {
		lab := ""
		switch y {
		case 0:
			lab = top
		case len(lines) - 1:
			lab = bottom
		}
		out = append(out, muted.Paint(draw.PadLeft(lab, lw)+m.styles.Glyphs.VLine)+l)
	}
	axis := strings.Repeat(" ", lw+1) + left
	if gap := pw - draw.Width(left) - draw.Width(right); gap > 0 {
		axis += strings.Repeat(" ", gap) + right
	}
	return append(out, muted.Paint(axis))
}

func itoa(i int) string { return strconv.Itoa(i) }
