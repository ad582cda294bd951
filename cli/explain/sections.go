package explain

import (
	"fmt"
	"strings"
)

// The what-if table and the speedup waterfall (whatif.go computes them)
// are written after time to accuracy.

func (p *printer) sections(d *Document) {
	p.whatIf(d.WhatIf)
	if d.Waterfall != nil {
		p.waterfall(d.Waterfall)
	}
}

func (p *printer) whatIf(w *WhatIf) {
	p.heading("what-if")
	if w == nil {
		p.item("not estimated")
		return
	}
	p.item(fmt.Sprintf("each run's epoch time replayed from its recorded batches under another schedule, on the cores its host had; cache hit rate %s (%s)", pct(w.HitRate), w.HitRateFrom))
	for _, r := range w.Runs {
		p.sub(fmt.Sprintf("run %s: measured epoch %s s (median; the replay of its own schedule %+.1f %%)", r.Run, secs(r.MeasuredS), 100*r.ReplayError))
		t := &table{header: []string{"scenario", "epoch s", "speedup", "threads", "cores"}, right: []bool{false, true, true, true, true}}
		for _, e := range r.Estimates {
			t.add(e.Scenario.Label(), secs(e.EpochS), times(e.Speedup), fmt.Sprintf("%.1f", e.Threads), fmt.Sprint(e.Cores))
		}
		p.table(t, "    ")
	}
	for _, s := range w.NotEstimated {
		p.item("not estimated: " + s)
	}
	if len(w.Checks) == 0 && len(w.NotChecked) == 0 {
		return
	}
	p.sub("predicted from the baseline's runs beside the measurement (median epoch s)")
	if len(w.Checks) > 0 {
		t := &table{header: []string{"variant", "scenario", "predicted s", "measured s", "error", "runs"}, right: []bool{false, false, true, true, true, true}}
		for _, c := range w.Checks {
			sc := c.Scenario
			sc.Name = "" // the variant's name: show its schedule
			t.add(c.Variant, sc.Label(), secs(c.Predicted), secs(c.Measured), fmt.Sprintf("%+.1f %%", 100*c.Error), fmt.Sprintf("%d from %d", c.Runs, c.From))
		}
		p.table(t, "    ")
	}
	for _, s := range w.NotChecked {
		p.itemAt(1, "not checked: "+s)
	}
}

func (p *printer) waterfall(s *WaterfallSection) {
	p.heading("waterfall")
	if s.Waterfall == nil {
		p.item("not estimated: " + s.Why)
		return
	}
	w := s.Waterfall
	if len(w.Parts) == 0 {
		s.PartsFrom = "none (" + s.PartsFrom + ")"
	}
	p.item(fmt.Sprintf("%s over %s: epoch %s s → %s s (medians); parts: %s", s.Optimized, s.Baseline, secs(w.BaselineS), secs(w.OptimizedS), s.PartsFrom))
	p.item("in log-speedup the parts and the interaction add up to the total; interaction = what the parts gain together beyond (or short of) each alone")
	if s.HitRateFrom != "" {
		p.item(fmt.Sprintf("predicted parts: replayed from the baseline's runs; cache hit rate %s (%s)", pct(s.HitRate), s.HitRateFrom))
	}
	p.item("interval: measured, the 95 % bootstrap over paired repeats; predicted, the smallest and largest prediction over the baseline's repeats")
	t := &table{header: []string{"step", "speedup", "interval", "log", "cumulative", "source"}, right: []bool{false, true, false, true, false, false}}
	for _, b := range s.Bars {
		t.add(b.Name, times(b.Speedup), b.Interval(), fmt.Sprintf("%+.3f", b.Log), fmt.Sprintf("%.3f → %.3f", b.From, b.To), b.Source())
	}
	p.table(t, "    ")
}

func times(v float64) string {
	if v <= 0 {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("%.3f×", v))
}
