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

// runPlanned runs cfg, starting the recorder in Options.OnStart as the
// worker does, and returns the result, the plan and the events.
func runPlanned(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split) (*Result, []string, []profile.Event) {
	t.Helper()
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	var plan []string
	starts := 0
	dev := cpu.New(2, 0)
	res, err := Run(context.Background(), cfg, ds, split, dev, Options{Recorder: rec, OnStart: func(p []string) {
		starts++
		plan = p
		rec.RunStart("r", "s", "v", nil, nil, p...)
	}})
	if cerr := rec.Close("", err, nil); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if starts != 1 || sink.evs[0].T != profile.TypeRunStart {
		t.Fatalf("OnStart called %d times; first event %q: want once, before anything is recorded", starts, sink.evs[0].T)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes live after the run", live)
	}
	return res, plan, sink.evs
}

// aheadTransfers counts the transfer spans of batches sampler workers
// gathered ahead of the trainer.
func aheadTransfers(evs []profile.Event) int {
	n := 0
	for _, e := range spansNamed(evs, profile.StageTransfer) {
		if profile.IsSamplerLane(e.Lane) {
			n++
		}
	}
	return n
}

// TestPlanBudget: under the memory guard the optimized schedule's
// prefetch and overlapped evaluation are planned within the budget, from
// all of them kept (ample budget) through fewer batches gathered ahead
// and a deferred evaluation to batches that only wait sampled (a budget
// below the largest batch); every run ends without an OOM, under its
// budget, and does what its plan says.
func TestPlanBudget(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	base := memConfig("sage")
	ref, _ := runRecorded(t, base, ds, split)
	opt := base
	opt.SamplerWorkers, opt.Prefetch, opt.OverlapEval = 2, 4, true
	unbudgeted, plan, _ := runPlanned(t, opt, ds, split)
	if plan != nil {
		t.Fatalf("plan without a budget: %q", plan)
	}
	opt.MemGuard = GuardSplit
	for _, c := range []struct {
		frac     float64
		plan     []string // prefixes, in order
		ahead    bool     // batches gathered ahead
		overlaps bool     // the evaluation stays overlapped
	}{
		{3, []string{"prefetch: 4 of 4 batches gathered ahead", "overlapped evaluation: chunks sized to run beside a training batch"}, true, true},
		{1.5, []string{"prefetch: 1 of 4 batches gathered ahead", "overlap_eval on->off: evaluation deferred to each epoch's end: beside a training batch"}, true, false},
		{1.0, []string{"prefetch: batches wait sampled, gathered by the trainer: one gathered batch", "overlap_eval on->off"}, false, false},
		{0.6, []string{"prefetch: batches wait sampled, gathered by the trainer: a full training batch", "overlap_eval on->off: evaluation deferred to each epoch's end: not even a chunk of one node fits"}, false, false},
	} {
		cfg := opt
		budget := int64(float64(ref.PeakBytes) * c.frac)
		cfg.MemBudget = memory.Size(budget)
		res, plan, evs := runPlanned(t, cfg, ds, split)
		if len(plan) != len(c.plan) {
			t.Fatalf("%.1f × peak: plan %q, want %d lines", c.frac, plan, len(c.plan))
		}
		for i, p := range c.plan {
			if !strings.HasPrefix(plan[i], p) {
				t.Errorf("%.1f × peak: plan line %d %q, want it to start %q", c.frac, i, plan[i], p)
			}
		}
		if res.OOMCount != 0 || res.PeakBytes > budget || res.Batches == 0 {
			t.Errorf("%.1f × peak: %d OOMs, peak %d (budget %d), %d batches", c.frac, res.OOMCount, res.PeakBytes, budget, res.Batches)
		}
		if n := aheadTransfers(evs); (n > 0) != c.ahead {
			t.Errorf("%.1f × peak: %d batches gathered ahead, want some: %v", c.frac, n, c.ahead)
		}
		evalOnEvalLane := false
		for _, e := range spansNamed(evs, profile.StageEval) {
			evalOnEvalLane = evalOnEvalLane || e.Lane == profile.LaneEval
		}
		if evalOnEvalLane != c.overlaps {
			t.Errorf("%.1f × peak: evaluation on its own lane %v, want %v", c.frac, evalOnEvalLane, c.overlaps)
		}
		if c.frac >= 1.5 && res.TestAcc != unbudgeted.TestAcc {
			t.Errorf("%.1f × peak: test accuracy %v, unbudgeted %v: the guard should not have acted", c.frac, res.TestAcc, unbudgeted.TestAcc)
		}
	}
}
