package compare

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// TestSkippedRun: the compare view's status of a run that skipped batches
// says how many of how many, and a note says what its figures cover.
func TestSkippedRun(t *testing.T) {
	st := fixture.Store(t)
	skipped := fixture.Baseline
	skipped.Summary = map[string]any{"batches": 9, "skipped_batches": 3}
	fixture.Add(t, st, fixture.Session{ID: "20260102-030400-aaaa", Name: "skips",
		Variants: []string{"baseline", "optimized"}, Runs: []fixture.Run{skipped, fixture.Optimized}})
	hs := newHarness(t, st, 200, 40, "20260102-030400-aaaa")
	v := ansi.Strip(hs.m.View())
	for _, want := range []string{"ok, skipped 3 of 12 batches (25.0 %)", "baseline: skipped 3 of 12 batches (25.0 %): its epoch times and accuracy cover the trained batches only"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}
