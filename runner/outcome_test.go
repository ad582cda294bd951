package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
)

// TestRunTableOutcomes: the run table of run --wait shows a run that
// skipped batches as "ok, skipped N of M batches (x %)" with a note, a run
// that trained nothing as failed with its partial figures and its reason,
// and the adjustments the launcher made to a variant's config.
func TestRunTableOutcomes(t *testing.T) {
	_, s := newSession(t, "outcomes")
	writeRun(t, s, "baseline", []float64{1, 1}, profile.StatusOK, &train.Result{TestAcc: 0.5, BestEpoch: 1, Batches: 9, SkippedBatches: 3})

	recordJournal(t, s, "optimized", func(rec *profile.Recorder) error {
		rec.RunStart("optimized", s.ID(), "optimized", json.RawMessage(`{"epochs":2}`), &profile.Host{Cores: 2},
			"mem_guard off->split: memory budget 18.3MiB")
		rec.Span(profile.StageTrain, profile.LaneCompute, 1, 0, 0, 5e8)
		for _, e := range []profile.Event{
			{T: profile.TypeOOM, Epoch: 1, Batch: 0, Requested: 1 << 20, Budget: 1 << 20, Action: profile.ActionSkip},
			{T: profile.TypeOOM, Epoch: 1, Batch: 1, Requested: 1 << 20, Budget: 1 << 20, Action: profile.ActionSkip},
			{T: profile.TypeGuard, Epoch: 1, Batch: 2, Predicted: 2 << 20, Actual: 1 << 19, Budget: 1 << 20, Action: profile.ActionSplit},
		} {
			rec.Emit(e)
		}
		cause := errors.New("every training batch ran out of memory: 12 of 12 batches skipped by epoch 1")
		return rec.Close(profile.StatusFailed, cause, nil)
	})

	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	// failed allocations and the guard's reshaped batches, apart
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "VARIANT") && !strings.HasSuffix(l, "OOMS  GUARD"):
			t.Errorf("header %q", l)
		case strings.HasPrefix(l, "optimized ") && strings.Join(f[len(f)-2:], " ") != "2 1":
			t.Errorf("optimized row %q: want 2 OOMs, 1 guard action", l)
		case strings.HasPrefix(l, "baseline ") && strings.Join(f[len(f)-2:], " ") != "0 0":
			t.Errorf("baseline row %q", l)
		}
	}
	for _, want := range []string{
		"ok, skipped 3 of 12 batches (25.0 %)",
		"baseline: skipped 3 of 12 batches (25.0 %): its epoch times and accuracy cover the trained batches only",
		"failed, partial",
		"optimized: failed: every training batch ran out of memory: 12 of 12 batches skipped by epoch 1",
		"optimized: partial figures (the run stopped: failed); no speedup",
		"optimized: adjusted: mem_guard off->split: memory budget 18.3MiB",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("run table lacks %q:\n%s", want, out.String())
		}
	}
}
