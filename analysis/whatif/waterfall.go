package whatif

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/profile/stats"
)

// PartInput is one optimization of a waterfall: the runs of the variant
// that applies it alone (measured), or, without any, a predicted speedup.
type PartInput struct {
	Name string
	// Runs are the variant's repeats, paired with the baseline's by K.
	Runs []stats.Repeat
	// Predicted is the speedup over the baseline the model predicts (0:
	// none: the part's effect is left in the interaction); Lo and Hi
	// the spread of the predictions (0: none).
	Predicted, Lo, Hi float64
}

// Step is one bar of a waterfall: a speedup factor and its share of the
// total in log-speedup terms.
type Step struct {
	Name string `json:"name"`
	// Speedup is the factor (the baseline's epoch time over the
	// variant's; stats.Compare for measured parts); Lo and Hi its 95 %
	// interval (both 0: none).
	Speedup float64 `json:"speedup"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	// Log is ln(Speedup): the bars add up in these terms.
	Log float64 `json:"log"`
	// Predicted marks a part the model predicted; Unknown one neither
	// measured nor predicted (Log 0; its effect is in the interaction).
	Predicted bool `json:"predicted,omitempty"`
	Unknown   bool `json:"unknown,omitempty"`
	// Repeats is the paired repeats a measured speedup came from.
	Repeats int `json:"repeats,omitempty"`
}

// Waterfall splits the optimized variant's speedup over the baseline into
// its parts. It works in log-speedup: speedups compose by product, so
// that a part's ln(speedup) is its additive share, and
//
//	Total.Log = Σ Parts[i].Log + Interaction.Log
//
// holds exactly (Interaction.Log is defined as the remainder). An
// interaction above 0 says the parts together gain more than each alone
// (one hides what another exposed), below 0 that they gain less
// (overlap, contention for the same cores).
type Waterfall struct {
	// BaselineS and OptimizedS are the variants' median epoch times
	// (stats.VariantMedian).
	BaselineS  float64 `json:"baseline_s"`
	OptimizedS float64 `json:"optimized_s"`
	Total      Step    `json:"total"`
	Parts      []Step  `json:"parts"`
	// Interaction is the remainder; its interval, when there is one, is
	// a bootstrap of the per-repeat remainders (every part measured in
	// at least stats.MinRepeats repeats paired with the total's), whose
	// median may differ slightly from the remainder of the medians.
	Interaction Step `json:"interaction"`
}

// NewWaterfall computes the waterfall of the optimized variant's repeats
// over the baseline's, with the parts in the order given. It is an error
// when either side has no epoch time.
func NewWaterfall(base, optimized []stats.Repeat, parts []PartInput) (Waterfall, error) {
	w := Waterfall{BaselineS: stats.VariantMedian(base), OptimizedS: stats.VariantMedian(optimized)}
	if w.BaselineS <= 0 || w.OptimizedS <= 0 {
		return w, errors.New("waterfall: the baseline and the optimized variant need epoch times")
	}
	w.Total = measuredStep("total", base, optimized)
	rest := w.Total.Log
	for _, p := range parts {
		var s Step
		switch {
		case len(p.Runs) > 0 && stats.VariantMedian(p.Runs) > 0:
			s = measuredStep(p.Name, base, p.Runs)
		case p.Predicted > 0:
			s = Step{Name: p.Name, Speedup: p.Predicted, Lo: p.Lo, Hi: p.Hi, Log: math.Log(p.Predicted), Predicted: true}
		default:
			s = Step{Name: p.Name, Unknown: true}
		}
		w.Parts = append(w.Parts, s)
		rest -= s.Log
	}
	w.Interaction = Step{Name: "interaction", Log: rest, Speedup: math.Exp(rest)}
	w.Interaction.Lo, w.Interaction.Hi, w.Interaction.Repeats = interactionInterval(base, optimized, parts)
	return w, nil
}

// measuredStep is stats.Compare of a variant's repeats over the
// baseline's as a step.
func measuredStep(name string, base, variant []stats.Repeat) Step {
	sp := stats.Compare(base, variant)
	s := Step{Name: name, Speedup: sp.Ratio, Repeats: sp.Repeats}
	if sp.HasInterval() {
		s.Lo, s.Hi = sp.Lo, sp.Hi
	}
	if sp.Ratio > 0 {
		s.Log = math.Log(sp.Ratio)
	}
	return s
}

// interactionInterval bootstraps the interaction over repeats: for each
// repeat K the baseline and every variant ran, ln of the total's ratio
// less each measured part's ratio and each predicted part's log. It
// needs stats.MinRepeats such repeats and no unknown part; else it
// returns zeros.
func interactionInterval(base, optimized []stats.Repeat, parts []PartInput) (lo, hi float64, n int) {
	ks := repeatMedians(base)
	opt := repeatMedians(optimized)
	var rem []float64
	for k, b := range ks {
		o, ok := opt[k]
		if !ok {
			continue
		}
		r := math.Log(b / o)
		for _, p := range parts {
			switch {
			case len(p.Runs) > 0:
				v, ok := repeatMedians(p.Runs)[k]
				if !ok {
					r = math.NaN()
				} else {
					r -= math.Log(b / v)
				}
			case p.Predicted > 0:
				r -= math.Log(p.Predicted)
			default:
				return 0, 0, 0
			}
		}
		if !math.IsNaN(r) {
			rem = append(rem, r)
		}
	}
	if len(rem) < stats.MinRepeats {
		return 0, 0, len(rem)
	}
	// stats.Compare's bootstrap of the median of per-repeat ratios, fed
	// unit baseline epochs and exp(−r) variant epochs: each ratio is
	// exp(r).
	slices.Sort(rem)
	one, ex := make([]stats.Repeat, len(rem)), make([]stats.Repeat, len(rem))
	for i, r := range rem {
		one[i] = stats.Repeat{K: i + 1, Epochs: []float64{1}}
		ex[i] = stats.Repeat{K: i + 1, Epochs: []float64{math.Exp(-r)}}
	}
	sp := stats.Compare(one, ex)
	return sp.Lo, sp.Hi, len(rem)
}

// repeatMedians maps each repeat's K to its median epoch time (repeats
// without one left out).
func repeatMedians(reps []stats.Repeat) map[int]float64 {
	out := map[int]float64{}
	for _, r := range reps {
		if m := r.Median(); m > 0 {
			out[r.K] = m
		}
	}
	return out
}

// Sum returns the parts' and the interaction's logs added up, which is
// the total's Log (up to rounding).
func (w Waterfall) Sum() float64 {
	s := w.Interaction.Log
	for _, p := range w.Parts {
		s += p.Log
	}
	return s
}

// Check reports an error when the parts and the interaction do not add
// up to the total (a bug).
func (w Waterfall) Check() error {
	if d := math.Abs(w.Sum() - w.Total.Log); d > 1e-9 {
		return fmt.Errorf("waterfall: parts and interaction add up to %.6f, the total is %.6f", w.Sum(), w.Total.Log)
	}
	return nil
}

// PredictPart predicts a part from the baseline's runs: the median over
// them of each one's predicted speedup under s, with their smallest and
// largest as its spread.
func PredictPart(name string, bases []*Trace, s Scenario) PartInput {
	var sp []float64
	for _, b := range bases {
		if e := NewModel(b).Predict(s); e.Speedup > 0 {
			sp = append(sp, e.Speedup)
		}
	}
	p := PartInput{Name: name, Predicted: median(sp)}
	if len(sp) > 1 {
		p.Lo, p.Hi = slices.Min(sp), slices.Max(sp)
	}
	return p
}

// Repeats turns runs into stats repeats: K is each run's Repeat, or its
// place in runs (from 1) when it has none.
func Repeats(runs []*Trace) []stats.Repeat {
	out := make([]stats.Repeat, len(runs))
	for i, r := range runs {
		k := r.Repeat
		if k <= 0 {
			k = i + 1
		}
		out[i] = stats.Repeat{K: k, Epochs: r.Measured}
	}
	return out
}

// PartSpec is an optimization of a session's waterfall: the runs of the
// variant that applies it alone (none: predicted) and the scenario that
// predicts it from the baseline's runs (ScenarioFromConfig of that
// variant's config).
type PartSpec struct {
	Name     string
	Runs     []*Trace
	Scenario Scenario
}

// SessionWaterfall is NewWaterfall over a session's runs: each part
// measured where it has runs, else predicted from the baseline's runs
// under its scenario (PredictPart).
func SessionWaterfall(base, optimized []*Trace, parts []PartSpec) (Waterfall, error) {
	in := make([]PartInput, 0, len(parts))
	for _, p := range parts {
		if len(p.Runs) > 0 {
			in = append(in, PartInput{Name: p.Name, Runs: Repeats(p.Runs)})
			continue
		}
		in = append(in, PredictPart(p.Name, base, p.Scenario))
	}
	return NewWaterfall(Repeats(base), Repeats(optimized), in)
}

// Bar is a step of a waterfall as a chart draws it: from the cumulative
// speedup before it to the one after it (factors over the baseline; the
// total's bar runs from 1).
type Bar struct {
	Step
	From, To float64
	// Total marks the last bar, the total speedup.
	Total bool
}

// Bars returns the parts, the interaction and the total as bars in that
// order; the interaction's bar ends where the total's does.
func (w Waterfall) Bars() []Bar {
	var out []Bar
	at := 0.0
	for _, s := range append(slices.Clone(w.Parts), w.Interaction) {
		out = append(out, Bar{Step: s, From: math.Exp(at), To: math.Exp(at + s.Log)})
		at += s.Log
	}
	return append(out, Bar{Step: w.Total, From: 1, To: w.Total.Speedup, Total: true})
}
