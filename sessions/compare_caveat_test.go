package sessions

import "testing"

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
