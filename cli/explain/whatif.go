package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
)

// optimizedVariant is the variant the waterfall splits.
const optimizedVariant = string(runner.Optimized)

// WhatIf is the what-if section: each run's epoch time replayed under
// the standard scenarios, and the predictions of the session's measured
// variants from its baseline beside their measurement.
type WhatIf struct {
	// HitRate is the feature cache's hit rate the cache scenarios use;
	// HitRateFrom says whether the session measured it or it is assumed.
	HitRate     float64     `json:"hit_rate"`
	HitRateFrom string      `json:"hit_rate_from"`
	Runs        []RunWhatIf `json:"runs"`
	// Checks are the variants predicted from the baseline's runs whose
	// differences from the baseline the model replays; NotChecked the
	// variants left out, with the reason.
	Checks     []whatif.Check `json:"checks,omitempty"`
	NotChecked []string       `json:"not_checked,omitempty"`
	// NotEstimated lists the runs without a table, with the reason.
	NotEstimated []string `json:"not_estimated,omitempty"`
}

// RunWhatIf is one run's what-if table.
type RunWhatIf struct {
	Run string `json:"run"`
	// MeasuredS is the run's median epoch time; ReplayError the replay
	// of its own schedule against it (relative).
	MeasuredS   float64           `json:"measured_epoch_s"`
	ReplayError float64           `json:"replay_error"`
	Estimates   []whatif.Estimate `json:"estimates"`
}

// WaterfallSection is the speedup waterfall of the optimized variant
// over the baseline, or why there is none.
type WaterfallSection struct {
	Baseline  string `json:"baseline"`
	Optimized string `json:"optimized"`
	// PartsFrom says where the parts come from; HitRate is the cache
	// hit rate a predicted cache part uses, HitRateFrom whence.
	PartsFrom   string            `json:"parts_from,omitempty"`
	HitRate     float64           `json:"hit_rate,omitempty"`
	HitRateFrom string            `json:"hit_rate_from,omitempty"`
	Waterfall   *whatif.Waterfall `json:"waterfall,omitempty"`
	Bars        []whatif.Bar      `json:"bars,omitempty"`
	// Why says why there is no waterfall.
	Why string `json:"not_estimated,omitempty"`
}

// estimates holds the what-if models of the explained runs.
type estimates struct {
	ex      *Explained
	models  map[string]*whatif.Model // by run name
	session whatif.Session           // the runs that ended ok, by variant
	hitRate float64
	hitFrom string
}

func newEstimates(ex *Explained) *estimates {
	e := &estimates{ex: ex, models: map[string]*whatif.Model{}, session: whatif.Session{}}
	for _, t := range ex.Traces {
		e.session.Add(t)
		if len(t.Batches) > 0 && t.MeasuredMedian() > 0 {
			e.models[t.Run] = whatif.NewModel(t)
		}
	}
	e.hitRate, e.hitFrom = whatif.AssumedHitRate, "assumed"
	if h, ok := e.session.HitRate(optimizedVariant); ok {
		e.hitRate, e.hitFrom = h, "measured"
	}
	return e
}

// cacheScenario makes s move only the cache's misses at the hit rate,
// named so that an assumed rate shows.
func (e *estimates) cacheScenario(s whatif.Scenario) whatif.Scenario {
	s.Cache, s.HitRate = true, e.hitRate
	s.Name = ""
	s.Name = s.Label()
	if e.hitFrom != "measured" {
		s.Name += " (assumed)"
	}
	return s
}

// whatIf returns the what-if section.
func (e *estimates) whatIf() *WhatIf {
	w := &WhatIf{HitRate: e.hitRate, HitRateFrom: e.hitFrom}
	for _, t := range e.ex.Traces {
		if e.ex.Only != "" && t.Run != e.ex.Only {
			continue
		}
		m := e.models[t.Run]
		if m == nil {
			w.NotEstimated = append(w.NotEstimated, t.Run+": no trained batch with epoch times recorded")
			continue
		}
		rw := RunWhatIf{Run: t.Run, MeasuredS: t.MeasuredMedian(), ReplayError: m.ReplayError()}
		for _, s := range whatif.Standard(t, e.hitRate) {
			if s.Cache && !t.HasCache {
				s = e.cacheScenario(s)
			}
			rw.Estimates = append(rw.Estimates, m.Predict(s))
		}
		w.Runs = append(w.Runs, rw)
	}
	if e.ex.Only == "" {
		e.checks(w)
	}
	return w
}

// variants returns the session's variants with runs that ended ok: in
// launch order, then the others by name.
func (e *estimates) variants() []string {
	var out []string
	for _, v := range e.ex.Variants {
		if len(e.session[v]) > 0 {
			out = append(out, v)
		}
	}
	var rest []string
	for v := range e.session {
		if !slices.Contains(out, v) {
			rest = append(rest, v)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// checks predicts every measured variant from the baseline's runs; a
// variant that differs from the baseline beyond what the model replays
// is not checked, and says why.
func (e *estimates) checks(w *WhatIf) {
	bases := e.session[profile.VariantBaseline]
	if len(bases) == 0 {
		return
	}
	for _, v := range e.variants() {
		if v == profile.VariantBaseline {
			continue
		}
		c := whatif.CheckSession(bases, e.session[v])
		switch {
		case len(c.Unmodeled) > 0:
			w.NotChecked = append(w.NotChecked, fmt.Sprintf("%s: differs from the baseline in %s, which the model does not replay", v, strings.Join(c.Unmodeled, ", ")))
		case c.Predicted <= 0 || c.Measured <= 0:
			w.NotChecked = append(w.NotChecked, v+": no prediction or no measured epoch time")
		default:
			w.Checks = append(w.Checks, c)
		}
	}
}

// waterfall returns the waterfall section (nil when one run is
// explained).
func (e *estimates) waterfall() *WaterfallSection {
	if e.ex.Only != "" {
		return nil
	}
	ws := &WaterfallSection{Baseline: profile.VariantBaseline, Optimized: optimizedVariant, PartsFrom: e.ex.PartsFrom}
	if len(e.session[ws.Baseline]) == 0 || len(e.session[ws.Optimized]) == 0 {
		ws.Why = "the session holds no baseline and optimized runs that ended ok"
		return ws
	}
	if slices.ContainsFunc(e.ex.Parts, func(p whatif.PartConfig) bool { return len(e.session[p.Name]) == 0 }) {
		ws.HitRate, ws.HitRateFrom = e.hitRate, e.hitFrom
	}
	w, err := e.session.Waterfall(ws.Baseline, ws.Optimized, e.ex.Parts, e.hitRate)
	if err != nil {
		ws.Why = err.Error()
		return ws
	}
	ws.Waterfall, ws.Bars = &w, w.Bars()
	return ws
}

// gain is the advice's GainFunc: the what-if model's replay of the run
// with the change.
func (e *estimates) gain(r *analysis.Run, c analysis.Change) (analysis.Gain, bool) {
	m := e.models[r.Name]
	if m == nil {
		return analysis.Gain{}, false
	}
	s := whatif.Recorded(m.Trace())
	s.Name = ""
	switch c.Kind {
	case "sampler-workers":
		n, err := strconv.Atoi(c.Value)
		if err != nil || n <= 0 {
			return analysis.Gain{}, false
		}
		s.Workers, s.Prefetch = n, 0
	case "overlap-eval":
		s.OverlapEval = true
	case "cache-bytes":
		s = e.cacheScenario(s)
	default:
		return analysis.Gain{}, false
	}
	est := m.Predict(s)
	if est.EpochS <= 0 || est.Speedup <= 0 {
		return analysis.Gain{}, false
	}
	return analysis.Gain{EpochS: est.EpochS, Speedup: est.Speedup, Model: "what-if replay: " + est.Scenario.Label()}, true
}
