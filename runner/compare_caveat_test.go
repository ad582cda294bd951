package runner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
)

// TestSpeedupCaveatsInRow is the repro of a baseline that skipped 12.5 %
// of its batches under --on-oom skip and an optimized run whose plan the
// engine changed under the budget: the baseline's row says it is a
// reference that did less work, the optimized row says it is compared
// with it and which optimizations it dropped and why, in the row itself,
// also at 80 columns.
func TestSpeedupCaveatsInRow(t *testing.T) {
	_, s := newSession(t, "caveats")
	writeRun(t, s, "baseline", []float64{1, 1, 1, 1}, profile.StatusOK,
		&train.Result{TestAcc: 0.7, BestEpoch: 3, Batches: 35, SkippedBatches: 5})
	recordJournal(t, s, "optimized", func(rec *profile.Recorder) error {
		rec.RunStart("optimized", s.ID(), "optimized", json.RawMessage(`{"epochs":4}`), &profile.Host{Cores: 2},
			"mem_guard off->split: memory budget 19.4MiB, within which the engine plans prefetch and the overlapped evaluation",
			"prefetch: batches wait sampled, gathered by the trainer: a full training batch (19.4 MiB) needs more than the 18.0 MiB the budget leaves beside the model (the guard splits it)",
			"overlap_eval on->off: evaluation deferred to each epoch's end: not even a chunk of one node fits beside a training batch (19.4 MiB)")
		for i := range 4 {
			rec.Span(profile.StageTrain, profile.LaneCompute, i+1, 0, int64(i)*107e7, 107e7)
		}
		return rec.Close(profile.StatusOK, nil, &train.Result{TestAcc: 0.78, BestEpoch: 3, Batches: 40})
	})
	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{0, 80} {
		tab.Width = width
		var out bytes.Buffer
		if err := tab.Render(&out); err != nil {
			t.Fatal(err)
		}
		// a row and the note lines under it (a narrow table's)
		rows, cur := map[string]string{}, ""
		for _, l := range strings.Split(out.String(), "\n") {
			if name, _, ok := strings.Cut(l, " "); ok && (name == "baseline" || name == "optimized") {
				cur = name
				rows[cur] = l
			} else if cur != "" && strings.HasPrefix(l, "    ") {
				rows[cur] += " " + strings.TrimSpace(l)
			} else {
				cur = ""
			}
		}
		for run, want := range map[string][]string{
			"baseline":  {"1.00x", "reference skipped 12.5 % of its batches"},
			"optimized": {"vs a reference that skipped 12.5 %", "dropped prefetch, overlapped eval", "to fit the memory budget"},
		} {
			for _, w := range want {
				if !strings.Contains(rows[run], w) {
					t.Errorf("width %d: the %s row lacks %q:\n%s", width, run, w, out.String())
				}
			}
		}
	}
}
