package sessions

import (
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// TestEntrySkips: the list's status names the run that skipped batches,
// or counts the runs when several did.
func TestEntrySkips(t *testing.T) {
	e := Entry{Runs: []sessions.RunFigures{{Run: "baseline"}, {Run: "optimized", SkippedBatches: 3, TotalBatches: 12}}}
	if got := e.skips(); got != "optimized skipped 3 of 12 batches (25.0 %)" {
		t.Errorf("one run: %q", got)
	}
	e.Runs[0].SkippedBatches, e.Runs[0].TotalBatches = 1, 4
	if got := e.skips(); got != "skips in 2 runs" {
		t.Errorf("two runs: %q", got)
	}
	if got := (&Entry{Runs: []sessions.RunFigures{{Run: "baseline"}}}).skips(); got != "" {
		t.Errorf("none: %q", got)
	}
}

// TestSlimKeepsSkips: a cached entry keeps only the runs that skipped
// batches, and its status says the same as the whole entry's.
func TestSlimKeepsSkips(t *testing.T) {
	e := Entry{Runs: []sessions.RunFigures{{Run: "a"}, {Run: "b", SkippedBatches: 3, TotalBatches: 12}, {Run: "c", TotalBatches: 12}}}
	s := slim(e)
	if len(s.Runs) != 1 || s.Runs[0].Run != "b" {
		t.Errorf("slim kept %+v", s.Runs)
	}
	if s.skips() != e.skips() {
		t.Errorf("slim says %q, the entry %q", s.skips(), e.skips())
	}
}
