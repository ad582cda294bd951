package whatif

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// Scenario is a schedule the model replays a run under.
type Scenario struct {
	// Name labels the scenario in tables ("sample free", "2 workers,
	// prefetch 4", ...); Label fills it in when empty.
	Name string `json:"name"`
	// Free lists the stages taken to cost nothing: profile.StageSample,
	// StageTransfer, StageTrain or StageEval.
	Free []string `json:"free,omitempty"`
	// Workers is the sampler workers that sample and transfer beside
	// training (0: the trainer does, in turn); Prefetch their depth, the
	// batches prepared or being prepared beyond those the trainer took
	// (0: two per worker; at least Workers), as in the engine.
	Workers  int `json:"workers"`
	Prefetch int `json:"prefetch"`
	// OverlapEval evaluates each epoch beside the next one's training.
	OverlapEval bool `json:"overlap_eval"`
	// Cache makes transfers move only the feature cache's misses: the
	// share HitRate of every batch's input rows costs nothing to move.
	Cache   bool    `json:"cache"`
	HitRate float64 `json:"hit_rate"`
	// Cores and Procs replace the host's logical CPUs and the Go
	// runtime's processors (0: the recorded run's).
	Cores int `json:"cores,omitempty"`
	Procs int `json:"procs,omitempty"`
}

// depth returns the pipeline's depth as the engine sets it.
func (s Scenario) depth() int {
	d := s.Prefetch
	if d <= 0 {
		d = 2 * s.Workers
	}
	return max(d, s.Workers)
}

func (s Scenario) free(stage string) bool { return slices.Contains(s.Free, stage) }

// Label returns Name, or a description of the scenario when it has none.
func (s Scenario) Label() string {
	if s.Name != "" {
		return s.Name
	}
	var parts []string
	for _, f := range s.Free {
		parts = append(parts, f+" free")
	}
	if s.Workers > 0 {
		parts = append(parts, fmt.Sprintf("%d workers, prefetch %d", s.Workers, s.depth()))
	}
	if s.OverlapEval {
		parts = append(parts, "eval overlapped")
	}
	if s.Cache {
		parts = append(parts, fmt.Sprintf("cache %.0f %% hits", 100*s.HitRate))
	}
	if s.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", s.Cores))
	}
	if len(parts) == 0 {
		return "as recorded"
	}
	return strings.Join(parts, ", ")
}

// Recorded returns the scenario of the trace's own schedule.
func Recorded(t *Trace) Scenario {
	return Scenario{Name: "as recorded", Workers: t.Workers, Prefetch: t.Prefetch, OverlapEval: t.OverlapEval, Cache: t.HasCache, HitRate: t.HitRate}
}

// ScenarioOf returns the schedule of a run, for predicting it from
// another run: the workers, prefetch and overlapped evaluation of its
// config and, when it had a feature cache, its measured hit rate. The
// name is the run's variant.
func ScenarioOf(t *Trace) Scenario {
	s := Recorded(t)
	s.Name = t.Variant
	return s
}

// ScenarioFromConfig returns the schedule an engine config (run_start's
// config, train.Config's JSON) runs: its workers, prefetch and
// overlapped evaluation, and, when it sets a feature cache, a cache of
// hitRate (the caller's estimate: a measured run's hit rate).
func ScenarioFromConfig(name string, config json.RawMessage, hitRate float64) (Scenario, error) {
	var cfg runConfig
	if err := json.Unmarshal(config, &cfg); err != nil {
		return Scenario{}, fmt.Errorf("config of %s: %w", name, err)
	}
	s := Scenario{Name: name, Workers: cfg.SamplerWorkers, Prefetch: cfg.Prefetch, OverlapEval: cfg.OverlapEval}
	if cfg.CacheBytes != "" && cfg.CacheBytes != "0" {
		s.Cache, s.HitRate = true, hitRate
	}
	return s, nil
}

// Standard returns the what-if table's scenarios for a run: each stage
// free, the run's preparation moved to workers (two, prefetch four, as
// the pipelined variant) when it samples batches on the trainer, its
// evaluation overlapped when it runs in turn, and a cache at hitRate
// when it has none and hitRate > 0 (the run's own hit rate when it has
// one).
func Standard(t *Trace, hitRate float64) []Scenario {
	var out []Scenario
	for _, st := range []string{profile.StageSample, profile.StageTransfer, profile.StageTrain, profile.StageEval} {
		out = append(out, Scenario{Name: st + " free", Free: []string{st}, Workers: t.Workers, Prefetch: t.Prefetch, OverlapEval: t.OverlapEval, Cache: t.HasCache, HitRate: t.HitRate})
	}
	base := Recorded(t)
	base.Name = ""
	if t.Workers == 0 && slices.ContainsFunc(t.Batches, func(b Batch) bool { return b.Sample > 0 }) {
		s := base
		s.Workers, s.Prefetch = 2, 4
		out = append(out, s)
	}
	if !t.OverlapEval && hasEval(t) {
		s := base
		s.OverlapEval = true
		out = append(out, s)
	}
	if !t.HasCache && hitRate > 0 {
		s := base
		s.Cache, s.HitRate = true, hitRate
		out = append(out, s)
	}
	return out
}

func hasEval(t *Trace) bool {
	return slices.ContainsFunc(t.Epochs, func(e EpochRec) bool { return e.Eval > 0 })
}
