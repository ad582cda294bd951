package runner

import (
	"testing"

	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// TestResolveFitsOptimizedToBudget: under a memory budget the optimized
// variant runs with the memory guard and says so; the baseline, a variant
// that sets the guard itself and a run without a budget are left alone.
func TestResolveFitsOptimizedToBudget(t *testing.T) {
	exp := Experiment{Data: "synth-tiny", Split: DefaultSplit(), Train: train.Defaults(nn.KindSAGE)}
	exp.Train.MemBudget = memory.Size(19 << 20)
	own := Variant{Name: "optimized", Overrides: map[string]any{"sampler_workers": 2, "mem_guard": "cut"}}
	res, err := Resolve(exp, DefaultVariants())
	if err != nil {
		t.Fatal(err)
	}
	base, opt := res[0], res[1]
	if base.Config.MemGuard != "" || base.Adjusted != nil {
		t.Errorf("baseline: guard %q, adjusted %q", base.Config.MemGuard, base.Adjusted)
	}
	if opt.Config.MemGuard != train.GuardSplit || len(opt.Adjusted) != 1 ||
		opt.Adjusted[0] != "mem_guard off->split: memory budget 19.0MiB, within which the engine plans prefetch and the overlapped evaluation" {
		t.Errorf("optimized: guard %q, adjusted %q", opt.Config.MemGuard, opt.Adjusted)
	}
	if opt.Config.SamplerWorkers != 2 || opt.Config.Prefetch != 4 || !opt.Config.OverlapEval {
		t.Errorf("optimized lost its optimizations: %+v", opt.Config)
	}
	if res, err := Resolve(exp, []Variant{own}); err != nil || res[0].Config.MemGuard != train.GuardCut || res[0].Adjusted != nil {
		t.Errorf("own guard: %+v, %v", res, err)
	}
	exp.Train.MemBudget = 0
	if res, err := Resolve(exp, DefaultVariants()); err != nil || res[1].Config.MemGuard != "" || res[1].Adjusted != nil {
		t.Errorf("no budget: %+v, %v", res, err)
	}
}
