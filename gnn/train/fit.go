package train

import (
	"fmt"
	"strings"

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
// memory guard, FitBudget turns on the memory guard (split): the engine
// then plans, once the dataset is loaded and the guard calibrated, how
// many batches the workers gather ahead and whether the overlapped
// evaluation runs beside training or after each epoch (see planBudget;
// its decisions join these lines in run_start). A config whose guard the
// user set, or that has no such optimization, is left alone.
func FitBudget(cfg Config) (Config, []string) {
	if cfg.MemBudget <= 0 || cfg.MemGuard != "" || cfg.Sampler != SamplerNeighbor {
		return cfg, nil
	}
	var held []string
	if cfg.SamplerWorkers > 0 {
		held = append(held, "prefetch")
	}
	if cfg.OverlapEval {
		held = append(held, "the overlapped evaluation")
	}
	if len(held) == 0 {
		return cfg, nil
	}
	out := cfg
	out.MemGuard = GuardSplit
	if out.Validate() != nil {
		return cfg, nil
	}
	note := fmt.Sprintf("mem_guard off->%s: memory budget %s, within which the engine plans %s",
		GuardSplit, units.FormatSize(int64(cfg.MemBudget)), strings.Join(held, " and "))
	return out, []string{note}
}
