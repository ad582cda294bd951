package whatif

import (
	"encoding/json"
	"slices"

	"github.com/gnnscope/gnnscope/profile/stats"
)

// Model replays one run under scenarios.
type Model struct {
	t   *Trace
	rec hostModel
	sp  speeds
	// asRecorded is the replay of the run's own schedule: its median
	// epoch time (s).
	asRecorded float64
}

// NewModel returns the model of a run.
func NewModel(t *Trace) *Model {
	m := &Model{t: t, rec: newHostModel(t)}
	m.sp = recordedSpeeds(t, m.rec)
	ep, _ := replay(buildPlan(t, Recorded(t), m.rec, m.sp), m.rec)
	m.asRecorded = median(ep)
	return m
}

// Trace returns the run the model replays.
func (m *Model) Trace() *Trace { return m.t }

// ReplayError is the replay of the run's own schedule against its
// measured median epoch time, relative (0.02: the replay is 2 % longer);
// 0 without a measurement. A large one says the model misses part of
// what the run did.
func (m *Model) ReplayError() float64 {
	meas := m.t.MeasuredMedian()
	if meas <= 0 || m.asRecorded <= 0 {
		return 0
	}
	return m.asRecorded/meas - 1
}

// Parallelism returns the threads the model gives training and
// evaluation, and the threads of other processes it takes to compete for
// the cores (see hostModel).
func (m *Model) Parallelism() (train, external float64) { return m.rec.par, m.rec.ext }

// Estimate is a scenario's predicted epoch time.
type Estimate struct {
	Scenario Scenario `json:"scenario"`
	// EpochS is the predicted median epoch time in seconds; Epochs the
	// predicted epoch times. Both are the replay's, scaled by the run's
	// measured median over the replay of its own schedule, so that what
	// the replay misses of the run cancels out.
	EpochS float64   `json:"epoch_s"`
	Epochs []float64 `json:"epochs_s"`
	// Speedup is the run's measured median epoch time over EpochS.
	Speedup float64 `json:"speedup"`
	// Threads is the replay's average runnable threads, against the
	// host's Cores.
	Threads float64 `json:"threads"`
	Cores   int     `json:"cores"`
}

// Predict replays the run under s.
func (m *Model) Predict(s Scenario) Estimate {
	run := m.rec
	if s.Cores > 0 {
		run.cores = float64(s.Cores)
	}
	if s.Procs > 0 {
		run.procs = float64(s.Procs)
	}
	ep, threads := replay(buildPlan(m.t, s, m.rec, m.sp), run)
	scale := 1.0
	if meas := m.t.MeasuredMedian(); meas > 0 && m.asRecorded > 0 {
		scale = meas / m.asRecorded
	}
	est := Estimate{Scenario: s, Threads: threads, Cores: int(run.cores)}
	if est.Scenario.Name == "" {
		est.Scenario.Name = s.Label()
	}
	for _, x := range ep {
		est.Epochs = append(est.Epochs, x*scale)
	}
	est.EpochS = median(est.Epochs)
	if meas := m.t.MeasuredMedian(); meas > 0 && est.EpochS > 0 {
		est.Speedup = meas / est.EpochS
	}
	return est
}

// Table returns the estimates of the run's Standard scenarios.
func (m *Model) Table(hitRate float64) []Estimate {
	var out []Estimate
	for _, s := range Standard(m.t, hitRate) {
		out = append(out, m.Predict(s))
	}
	return out
}

// Check is a prediction beside the measurement it predicts.
type Check struct {
	Variant  string   `json:"variant"`
	Scenario Scenario `json:"scenario"`
	// Predicted is the median over the baseline runs of each one's
	// predicted median epoch time (s); Measured the variant's median
	// epoch time over its runs (the median of each run's median, as the
	// comparisons compute it).
	Predicted float64 `json:"predicted_s"`
	Measured  float64 `json:"measured_s"`
	// Error is Predicted / Measured − 1 (0.1: predicted 10 % slower).
	Error float64 `json:"error"`
	// From and Runs are the baseline runs predicted from and the
	// variant's runs measured.
	From int `json:"from"`
	Runs int `json:"runs"`
	// Unmodeled lists the config keys in which the variant differs from
	// the baseline beyond what a Scenario replays (the model's blind
	// spots: a memory guard, another sampler, model sizes); a check with
	// any predicts the variant as if they did not differ.
	Unmodeled []string `json:"unmodeled,omitempty"`
}

// CheckRun predicts a measured run of a variant from a baseline run of
// the same session: the scenario is the variant run's own schedule
// (ScenarioOf).
func CheckRun(base, variant *Trace) Check {
	return CheckSession([]*Trace{base}, []*Trace{variant})
}

// CheckSession predicts a variant measured over several runs from the
// baseline's runs: each baseline run predicts the schedule of the
// variant's first run (with the median hit rate of its runs when it has a
// cache), and the median prediction is set beside the variant's median
// epoch time. Without runs on either side it returns a zero Check.
func CheckSession(bases, variants []*Trace) Check {
	if len(bases) == 0 || len(variants) == 0 {
		return Check{}
	}
	s := ScenarioOf(variants[0])
	var hits []float64
	reps := make([]stats.Repeat, 0, len(variants))
	for i, v := range variants {
		if v.HasCache {
			hits = append(hits, v.HitRate)
		}
		reps = append(reps, stats.Repeat{K: i + 1, Epochs: v.Measured})
	}
	if len(hits) > 0 {
		s.HitRate = median(hits)
	}
	var preds []float64
	for _, b := range bases {
		if e := NewModel(b).Predict(s); e.EpochS > 0 {
			preds = append(preds, e.EpochS)
		}
	}
	c := Check{Variant: variants[0].Variant, Scenario: s, Predicted: median(preds), Measured: stats.VariantMedian(reps), From: len(preds), Runs: len(variants),
		Unmodeled: unmodeled(bases[0].Config, variants[0].Config)}
	if c.Measured > 0 && c.Predicted > 0 {
		c.Error = c.Predicted/c.Measured - 1
	}
	return c
}

// median is stats.Median of the positive values.
func median(xs []float64) float64 {
	pos := slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return !(x > 0) })
	return stats.Median(pos)
}

// scheduleKeys are the config keys a Scenario replays (train.Config's
// JSON names).
var scheduleKeys = []string{"sampler_workers", "prefetch", "overlap_eval", "cache_bytes", "cache_policy"}

// unmodeled returns the keys of two configs (JSON objects) whose values
// differ, other than scheduleKeys, sorted; nil when either does not
// decode.
func unmodeled(a, b json.RawMessage) []string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return nil
	}
	var out []string
	for k := range mapKeys(ma, mb) {
		if slices.Contains(scheduleKeys, k) || string(ma[k]) == string(mb[k]) {
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mapKeys(ms ...map[string]json.RawMessage) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}
