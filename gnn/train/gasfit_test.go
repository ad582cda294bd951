package train

import (
	"context"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/profile"
)

// TestGASFitsTheBudget is the repro of gas under a memory budget that its
// batches of the configured parts do not fit (where neighbor sampling
// does): the run lowers its parts per batch so the batches fit, trains
// every batch, and says so in its plan (run_start's adjusted).
func TestGASFitsTheBudget(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 1)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	run := func(cfg Config) (*Result, []string, int64, error) {
		sink := &memSink{}
		rec := profile.NewRecorder(sink, profile.RecorderOptions{})
		var plan []string
		res, err := Run(context.Background(), cfg, ds, split, cpu.New(2, 0), Options{Recorder: rec, OnStart: func(p []string) { plan = p }})
		rec.Close("", err, nil)
		var peak int64
		for _, ev := range sink.evs {
			if ev.T == profile.TypeMem && ev.Phase == "train" {
				peak = max(peak, ev.Peak)
			}
		}
		return res, plan, peak, err
	}
	cfg := gasConfig("sage")
	cfg.Parts, cfg.PartsPerBatch, cfg.Epochs = 12, 6, 2
	_, _, peak, err := run(cfg)
	if err != nil || peak == 0 {
		t.Fatalf("without a budget: peak %d, %v", peak, err)
	}
	cfg.MemBudget = memory.Size(peak * 6 / 10)
	res, plan, got, err := run(cfg)
	if err != nil {
		t.Fatalf("gas under a budget of 60 %% of its batches' peak (%d bytes): %v", peak, err)
	}
	line := strings.Join(plan, "\n")
	if !strings.Contains(line, "parts_per_batch 6->") {
		t.Errorf("the plan does not say it lowered parts_per_batch:\n%s", line)
	}
	if res.SkippedBatches != 0 || got > int64(cfg.MemBudget) {
		t.Errorf("skipped %d batches, peak %d over the budget %d", res.SkippedBatches, got, cfg.MemBudget)
	}
	t.Logf("peak %d without a budget; %d under %d: %s", peak, got, cfg.MemBudget, line)
}
