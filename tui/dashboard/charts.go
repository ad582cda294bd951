package dashboard

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// charts is how the dashboard draws its curves: every run overlaid in
// one chart, the smoothing level (an index in plot.Smoothing) and the
// log scale of the loss.
type charts struct {
	overlay bool
	smooth  int
	logLoss bool
}

// chartKey handles the chart keys (overlay, smoothing, log scale); it
// reports whether msg was one of them.
func (m *Model) chartKey(msg tea.KeyPressMsg) bool {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Overlay):
		m.charts.overlay = !m.charts.overlay
	case key.Matches(msg, k.SmoothMore):
		m.charts.smooth = min(m.charts.smooth+1, len(plot.Smoothing)-1)
	case key.Matches(msg, k.SmoothLess):
		m.charts.smooth = max(m.charts.smooth-1, 0)
	case key.Matches(msg, k.LogScale):
		m.charts.logLoss = !m.charts.logLoss
	default:
		return false
	}
	m.applyCharts()
	m.dirty = true
	return true
}

// applyCharts hands the smoothing and the log scale to the charts.
func (m *Model) applyCharts() {
	ema := plot.Smoothing[m.charts.smooth]
	loss := plot.Transform{EMA: ema, Log: m.charts.logLoss}
	for _, p := range m.panels {
		p.loss.SetTransform(loss)
		p.acc.SetTransform(plot.Transform{EMA: ema})
	}
	m.overlay.SetTransform(loss)
}

// Overlay reports whether the runs are drawn overlaid.
func (m *Model) Overlay() bool { return m.charts.overlay }

// Smoothing returns the EMA weight the curves are smoothed with.
func (m *Model) Smoothing() float64 { return plot.Smoothing[m.charts.smooth] }

// LogLoss reports whether the loss is drawn on a log scale.
func (m *Model) LogLoss() bool { return m.charts.logLoss }

// overlayView draws every run's loss, accuracy and memory in one chart
// each, in w×h.
func (m *Model) overlayView(runs []*runstate.Run, w, h int) []string {
	m.overlay.SetSize(w, h)
	return strings.Split(m.overlay.View(runs), "\n")
}
