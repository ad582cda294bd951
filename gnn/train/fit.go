package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/profile/units"
)

// FitBudget returns cfg adjusted to run its optimizations within its
// memory budget, and one line per adjustment saying what changed and why
// (none: cfg is returned as it is).
//
// Sampler workers prefetching gathered batches and an overlapped
// evaluation each hold device memory beside the training batch; under a
// budget that the baseline schedule's batches barely fit, they make the
// run fail in its first batch. With a budget, neighbor sampling and no
// memory guard, FitBudget turns on the memory guard (split): its
// prediction then counts what these optimizations keep resident, since
// prefetched batches wait sampled but not gathered (holding no device
// memory until the guard passes them) and an overlapped evaluation's
// chunks share the budget with training batches through the memory gate
// (room beside the evaluated snapshot, memState.evalResident). A config
// whose guard the user set, or that has no such optimization, is left
// alone.
func FitBudget(cfg Config) (Config, []string) {
	if cfg.MemBudget <= 0 || cfg.MemGuard != "" || cfg.Sampler != SamplerNeighbor {
		return cfg, nil
	}
	var held []string
	if cfg.SamplerWorkers > 0 {
		depth := cfg.Prefetch
		if depth <= 0 {
			depth = 2 * cfg.SamplerWorkers
		}
		held = append(held, fmt.Sprintf("%d prefetched batches wait sampled, gathered once the guard passes them", max(depth, cfg.SamplerWorkers)))
	}
	if cfg.OverlapEval {
		held = append(held, "the overlapped evaluation shares the budget with training batches")
	}
	if len(held) == 0 {
		return cfg, nil
	}
	out := cfg
	out.MemGuard = GuardSplit
	if out.Validate() != nil {
		return cfg, nil
	}
	note := fmt.Sprintf("mem_guard off->%s: memory budget %s", GuardSplit, units.FormatSize(int64(cfg.MemBudget)))
	for _, h := range held {
		note += "; " + h
	}
	return out, []string{note}
}
