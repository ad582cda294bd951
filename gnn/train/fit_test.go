package train

import (
	"context"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
)

// TestFitBudget: at 90 % of the baseline schedule's unbudgeted peak, the
// optimized schedule (sampler workers, prefetch, overlapped evaluation)
// runs out of memory as configured; adjusted by FitBudget it ends ok with
// its peak under the budget, keeping its optimizations.
func TestFitBudget(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	base := memConfig("sage")
	res, _ := runRecorded(t, base, ds, split)
	budget := res.PeakBytes * 9 / 10

	opt := base
	opt.SamplerWorkers, opt.Prefetch, opt.OverlapEval = 2, 4, true
	opt.MemBudget = memory.Size(budget)
	if _, err := Run(context.Background(), opt, ds, split, cpu.New(2, 0), Options{}); !device.IsOOM(err) {
		t.Fatalf("optimized as configured: %v, want an OOM", err)
	}
	fit, notes := FitBudget(opt)
	if fit.MemGuard != GuardSplit || len(notes) != 1 || !strings.HasPrefix(notes[0], "mem_guard off->split: memory budget ") {
		t.Fatalf("FitBudget: guard %q, notes %q", fit.MemGuard, notes)
	}
	if fit.SamplerWorkers != 2 || fit.Prefetch != 4 || !fit.OverlapEval {
		t.Fatalf("FitBudget dropped an optimization: %+v", fit)
	}
	got, _ := runRecorded(t, fit, ds, split)
	if got.PeakBytes > budget || got.OOMCount != 0 || got.Batches == 0 {
		t.Fatalf("adjusted: peak %d (budget %d), %d OOMs, %d batches", got.PeakBytes, budget, got.OOMCount, got.Batches)
	}

	for _, c := range []Config{base, func() Config { c := opt; c.MemBudget = 0; return c }(), func() Config { c := opt; c.MemGuard = GuardCut; return c }()} {
		if out, notes := FitBudget(c); notes != nil || out.MemGuard != c.MemGuard {
			t.Errorf("FitBudget changed %+v: %q", c, notes)
		}
	}
}
