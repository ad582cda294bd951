package sessions

import (
	"strings"
	"testing"
)

// TestPlanSummary condenses the adjusted lines of an optimized run under
// a 19.4 MiB budget (as a real run wrote them) to what it dropped, what
// it set, and why.
func TestPlanSummary(t *testing.T) {
	adjusted := []string{
		"cache_bytes off->4MiB: a quarter of the memory budget 19.4MiB (whole MiB), three quarters left to the model, the batches and evaluation",
		"mem_guard off->split: memory budget 19.4MiB, within which the engine plans prefetch and the overlapped evaluation",
		"feature cache: degree policy, 16384 rows (16.4 % of the feature matrix), 4.0MiB on the device",
		"prefetch: batches wait sampled, gathered by the trainer: a full training batch (19.5MiB) needs more than the 15.2MiB the budget leaves beside the model (the guard splits it)",
		"overlap_eval on->off: evaluation deferred to each epoch's end: not even a chunk of one node fits beside a training batch (19.5MiB)",
	}
	want := "dropped prefetch, overlapped eval; set cache bytes 4MiB, mem guard split to fit the memory budget"
	if got := PlanSummary(adjusted); got != want {
		t.Errorf("PlanSummary:\n got %q\nwant %q", got, want)
	}
	if got := PlanSummary([]string{"prefetch: 2 of 4 batches gathered ahead (8MiB reserved, 4MiB a batch)"}); got != "set prefetch 2 of 4" {
		t.Errorf("a smaller prefetch: %q", got)
	}
	if got := PlanSummary([]string{"cache_bytes off->20%: no memory budget, so the default share of the feature rows"}); got != "" {
		t.Errorf("a default without a budget: %q, want nothing", got)
	}
	if got := PlanSummary(nil); got != "" {
		t.Errorf("nothing adjusted: %q", got)
	}
}

// TestInconclusive is the repro of L on a loaded two-core host: three
// repeats of optimized at 0.89x [0.58, 1.17], every run busy. The note
// says there is no clear speedup and why; a speedup whose interval
// excludes 1 gets none, a single run says it has no interval.
func TestInconclusive(t *testing.T) {
	reps := make([]*RunFigures, 3)
	for i := range reps {
		reps[i] = &RunFigures{Variant: "optimized", Repeat: i + 1, Speedup: 0.89, SpeedupLo: 0.58, SpeedupHi: 1.17, SpeedupMethod: "repeats",
			SpeedupRepeats: 3, HostBusy: "load 17.40 above 2 CPUs at the start", HostCPUs: 2, Config: map[string]string{"sampler_workers": "2"}}
	}
	got := Inconclusive(reps)
	for _, want := range []string{"no clear speedup here", "[0.58, 1.17] holds 1.00", "host busy in 3 of 3 runs", "2 cores: sampler workers compete with training"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	clear := *reps[0]
	clear.SpeedupLo, clear.SpeedupHi, clear.HostBusy = 1.1, 1.3, ""
	if got := Inconclusive([]*RunFigures{&clear}); got != "" {
		t.Errorf("an interval above 1: %q", got)
	}
	single := RunFigures{Speedup: 1.2, SingleRun: true, SpeedupRepeats: 1}
	if got := Inconclusive([]*RunFigures{&single}); !strings.Contains(got, "no interval from 1 run(s) a variant (--repeats 3 gives one)") {
		t.Errorf("single run: %q", got)
	}
}
