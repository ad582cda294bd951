package sessionlist

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/stats"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// TestFinishSpeedups: repeats count as their variant, with an interval
// over per-repeat ratios; a run that stopped early is never the best,
// however fast its partial epochs.
func TestFinishSpeedups(t *testing.T) {
	e := Entry{Baseline: "baseline.r1"}
	for _, k := range []string{"1", "2", "3"} {
		e.Runs = append(e.Runs,
			Run{Name: "baseline.r" + k, Variant: "baseline", Status: profile.StatusOK, EpochList: []float64{2, 2}},
			Run{Name: "optimized.r" + k, Variant: "optimized", Status: profile.StatusOK, EpochList: []float64{1, 1}})
	}
	e.Runs = append(e.Runs, Run{Name: "gas", Variant: "gas", Status: profile.StatusOOM, EpochList: []float64{0.01}})
	e.finish()
	if e.Best != "optimized" || e.Speedup.Ratio != 2 || e.Speedup.Method != stats.MethodRepeats || e.BaseEpochS != 2 || e.BestEpochS != 1 {
		t.Errorf("best %q speedup %+v base %v best %v", e.Best, e.Speedup, e.BaseEpochS, e.BestEpochS)
	}
	if gas := e.Runs[len(e.Runs)-1]; gas.Speedup.Ratio != 0 || gas.EpochS != 0 {
		t.Errorf("OOM-aborted run: %+v", gas)
	}
	if got := speedupCell(e.Speedup); got != "2.00x [2.00,2.00]" {
		t.Errorf("cell %q", got)
	}
	e.Runs = e.Runs[len(e.Runs)-1:] // the OOM run alone: no best, no speedup
	e.Baseline = ""
	e.finish()
	if e.Best != "" || e.Speedup.Ratio != 0 {
		t.Errorf("a stopped run alone: best %q speedup %+v", e.Best, e.Speedup)
	}
}

// TestPartialRunLine: the expanded line of a run aborted by an OOM says
// its figures are partial.
func TestPartialRunLine(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 120, 22)
	hs.press("down", "right") // the session whose baseline ran out of memory
	view := hs.m.View()
	if !strings.Contains(view, "oom") || !strings.Contains(view, "partial figures, no speedup") {
		t.Errorf("expanded OOM run:\n%s", view)
	}
}

// TestSkippedRunLine: a session whose run skipped batches says so in its
// status, and the run's expanded line says how many of how many.
func TestSkippedRunLine(t *testing.T) {
	st := fixture.Store(t)
	skipped := fixture.Baseline
	skipped.Summary = map[string]any{"batches": 9, "skipped_batches": 3}
	fixture.Add(t, st, fixture.Session{ID: "20260102-030400-aaaa", Name: "skips",
		Variants: []string{"baseline", "optimized"}, Runs: []fixture.Run{skipped, fixture.Optimized}})
	hs := newHarness(t, st, 120, 22)
	if view := hs.m.View(); !strings.Contains(view, "ok, skips") {
		t.Errorf("list:\n%s", view)
	}
	hs.press("right")
	if view := hs.m.View(); !strings.Contains(view, "ok, skipped 3 of 12 batches (25.0 %)") {
		t.Errorf("expanded session:\n%s", view)
	}
}
