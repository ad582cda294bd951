package whatif

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gnnscope/gnnscope/profile"
)

// PartConfig is an optimization of a session's waterfall as the config of
// the variant that applies it alone (run_start's config, train.Config's
// JSON): the runs of a variant of that name measure it, the config
// predicts it where there are none.
type PartConfig struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config,omitempty"`
}

// Session is a session's runs that ended ok, grouped by variant, with
// their repeats paired (Trace.Repeat set by the caller).
type Session map[string][]*Trace

// Add files a run's trace under its variant when it ended ok and has
// epoch times; it reports whether it did.
func (s Session) Add(t *Trace) bool {
	if t == nil || t.Status != profile.StatusOK || len(t.Measured) == 0 {
		return false
	}
	s[t.Variant] = append(s[t.Variant], t)
	return true
}

// HitRate returns the feature cache's hit rate the session measured: the
// median over its runs with a cache, those of variant prefer first when
// it has any; ok is false when no run had a cache.
func (s Session) HitRate(prefer string) (rate float64, ok bool) {
	collect := func(runs []*Trace) []float64 {
		var out []float64
		for _, t := range runs {
			if t.HasCache {
				out = append(out, t.HitRate)
			}
		}
		return out
	}
	if h := collect(s[prefer]); len(h) > 0 {
		return median(h), true
	}
	var all []float64
	for _, runs := range s {
		all = append(all, collect(runs)...)
	}
	if len(all) == 0 {
		return 0, false
	}
	return median(all), true
}

// PartsOf returns the session's variants other than base and optimized,
// in the order given, as parts whose config is their first run's: the
// waterfall's parts when nothing names the optimizations of the
// optimized variant.
func (s Session) PartsOf(names []string, base, optimized string) []PartConfig {
	var out []PartConfig
	for _, n := range names {
		if n == base || n == optimized || len(s[n]) == 0 {
			continue
		}
		out = append(out, PartConfig{Name: n, Config: s[n][0].Config})
	}
	return out
}

// Waterfall returns the waterfall of variant optimized over variant base
// with the parts in order: each measured by the session's runs of its
// name, else predicted from base's runs under ScenarioFromConfig of its
// config (a cache part at hitRate). It is an error when either side has
// no run.
func (s Session) Waterfall(base, optimized string, parts []PartConfig, hitRate float64) (Waterfall, error) {
	if len(s[base]) == 0 || len(s[optimized]) == 0 {
		return Waterfall{}, errors.New("waterfall: the session needs runs of " + base + " and " + optimized + " that ended ok")
	}
	specs := make([]PartSpec, 0, len(parts))
	for _, p := range parts {
		spec := PartSpec{Name: p.Name, Runs: s[p.Name]}
		if len(spec.Runs) == 0 {
			sc, err := ScenarioFromConfig(p.Name, p.Config, hitRate)
			if err != nil {
				return Waterfall{}, err
			}
			spec.Scenario = sc
		}
		specs = append(specs, spec)
	}
	return SessionWaterfall(s[base], s[optimized], specs)
}

// AssumedHitRate is the feature cache's hit rate a prediction assumes
// where no run of the session had a cache to measure one.
const AssumedHitRate = 0.5

// Source says where a bar's figure comes from: measured (with its paired
// repeats), predicted, the remainder (the interaction) or neither.
func (b Bar) Source() string {
	switch {
	case b.Unknown:
		return "not measured, not predicted (in the interaction)"
	case b.Predicted:
		return "predicted"
	case b.Name == "interaction" && !b.Total:
		return "remainder"
	case b.Repeats == 1:
		return "measured (1 repeat)"
	case b.Repeats > 1:
		return fmt.Sprintf("measured (%d paired repeats)", b.Repeats)
	}
	return "measured"
}

// Interval returns a step's interval as "[lo, hi]", "" without one.
func (s Step) Interval() string {
	if s.Lo <= 0 && s.Hi <= 0 {
		return ""
	}
	return fmt.Sprintf("[%.3f, %.3f]", s.Lo, s.Hi)
}
