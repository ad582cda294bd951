package runner

import (
	"slices"
	"strings"
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
	if opt.Config.MemGuard != train.GuardSplit || len(opt.Adjusted) != 3 || !strings.HasPrefix(opt.Adjusted[0], "sampler_workers ") ||
		opt.Adjusted[1] != "cache_bytes off->4MiB: a quarter of the memory budget 19.0MiB (whole MiB), three quarters left to the model, the batches and evaluation" ||
		opt.Adjusted[2] != "mem_guard off->split: memory budget 19.0MiB, within which the engine plans prefetch and the overlapped evaluation" {
		t.Errorf("optimized: guard %q, adjusted %q", opt.Config.MemGuard, opt.Adjusted)
	}
	if want, _ := PlanWorkers(DescribeMachine(nil), opt.Config); opt.Config.SamplerWorkers != want || opt.Config.Prefetch != 0 || !opt.Config.OverlapEval {
		t.Errorf("optimized lost its optimizations: %+v", opt.Config)
	}
	if opt.Config.CacheBytes != "4MiB" || opt.Config.CachePolicy != "degree" || base.Config.CacheBytes != "" {
		t.Errorf("cache: optimized %q by %q, baseline %q", opt.Config.CacheBytes, opt.Config.CachePolicy, base.Config.CacheBytes)
	}
	if res, err := Resolve(exp, []Variant{own}); err != nil || res[0].Config.MemGuard != train.GuardCut || len(res[0].Adjusted) != 1 {
		t.Errorf("own guard: %+v, %v", res, err)
	}
	exp.Train.MemBudget = 0
	if res, err := Resolve(exp, DefaultVariants()); err != nil || res[1].Config.MemGuard != "" || res[1].Config.CacheBytes != "20%" ||
		len(res[1].Adjusted) != 2 || res[1].Adjusted[1] != "cache_bytes off->20%: no memory budget, so the default share of the feature rows" {
		t.Errorf("no budget: %+v, %v", res, err)
	}
}

// TestResolveOptimizedCache: optimized takes a cache only when nothing
// set one, the schedule is neighbor-sampled and the budget leaves room.
func TestResolveOptimizedCache(t *testing.T) {
	sage := train.Defaults(nn.KindSAGE)
	opt := DefaultVariants()[1]
	cases := []struct {
		name   string
		base   func(c *train.Config)
		v      Variant
		want   string // the cache optimized runs with
		noting bool   // whether a cache_bytes line is adjusted
	}{
		{"base sets a size", func(c *train.Config) { c.CacheBytes = "64MiB" }, opt, "64MiB", false},
		{"base turns it off", func(c *train.Config) { c.CacheBytes = "0" }, opt, "0", false},
		{"variant sets it", func(*train.Config) {}, Variant{Name: "optimized", Overrides: map[string]any{"cache_bytes": "5%"}}, "5%", false},
		{"no room in the budget", func(c *train.Config) { c.MemBudget = memory.Size(3 << 20) }, opt, "", false},
		{"room for 1 MiB", func(c *train.Config) { c.MemBudget = memory.Size(4 << 20) }, opt, "1MiB", true},
		{"full batch", func(c *train.Config) { c.Sampler = train.SamplerFull }, Variant{Name: "optimized", Overrides: map[string]any{"overlap_eval": true, "sampler_workers": 0}}, "", false},
		{"frequency kept", func(c *train.Config) { c.CachePolicy = "frequency" }, opt, "20%", true},
	}
	for _, tc := range cases {
		exp := Experiment{Data: "synth-tiny", Split: DefaultSplit(), Train: sage}
		exp.Train.Fanouts = slices.Clone(sage.Fanouts)
		tc.base(&exp.Train)
		res, err := Resolve(exp, []Variant{tc.v})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := res[0]
		noted := slices.ContainsFunc(got.Adjusted, func(a string) bool { return strings.HasPrefix(a, "cache_bytes off->") })
		if got.Config.CacheBytes != tc.want || noted != tc.noting {
			t.Errorf("%s: cache %q, adjusted %q", tc.name, got.Config.CacheBytes, got.Adjusted)
		}
		if tc.name == "frequency kept" && got.Config.CachePolicy != "frequency" {
			t.Errorf("%s: policy %q", tc.name, got.Config.CachePolicy)
		}
	}
}
