package dashboard

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
)

// TestOutcomesShown: a run that skipped batches says how many in the
// table and its panel's header, and a run whose config the launcher
// adjusted says what changed in its header.
func TestOutcomesShown(t *testing.T) {
	tracks := twoRuns()
	base := tracks[0].Events
	end := &base[len(base)-1]
	if end.T != profile.TypeRunEnd {
		t.Fatalf("last baseline event %s", end.T)
	}
	end.Summary = []byte(`{"batches":450,"skipped_batches":150}`)
	opt := tracks[1].Events
	if opt[0].T != profile.TypeRunStart {
		t.Fatalf("first optimized event %s", opt[0].T)
	}
	opt[0].Adjusted = []string{"mem_guard off->split: memory budget 18.3MiB"}
	m, _ := replayModel(t, common.Options{NoColor: true}, 200, 40, tracks, sessions.ReplayOptions{Paused: true})
	m.replay.Seek(m.replay.Duration())
	waitEvents(t, m, total(tracks))
	out := m.View()
	want := "ok, skipped 150 of 600 batches (25.0 %)"
	if n := strings.Count(out, want); n != 2 { // the table and the panel's header
		t.Errorf("%q shown %d times:\n%s", want, n, out)
	}
	m.Update(press("tab"))
	out = m.View()
	if !strings.Contains(out, "adjusted: mem_guard off->split: memory budget 18.3MiB") {
		t.Errorf("optimized panel lacks the adjustment:\n%s", out)
	}
	golden.Check(t, "outcomes_200x40_tab", out)
}

// TestAdjustedLines: what was adjusted is wrapped, never cut mid-line
// while it fits the limit, and ends in the ellipsis when it does not.
func TestAdjustedLines(t *testing.T) {
	id := func(s ...string) string { return strings.Join(s, "") }
	adj := []string{"mem_guard off->split: memory budget 18.3MiB", "prefetch: 2 of 4 batches gathered ahead (4.0MiB reserved, 2.0MiB a batch)"}
	got := adjustedLines(adj, 40, 10, "…", id)
	if want := []string{"adjusted: mem_guard off->split: memory", "budget 18.3MiB", "adjusted: prefetch: 2 of 4 batches", "gathered ahead (4.0MiB reserved, 2.0MiB", "a batch)"}; !slices.Equal(got, want) {
		t.Errorf("wrapped:\n%q\nwant\n%q", got, want)
	}
	got = adjustedLines(adj, 40, 2, "…", id)
	if len(got) != 2 || !strings.HasSuffix(got[1], "…") || got[0] != "adjusted: mem_guard off->split: memory" {
		t.Errorf("limited to 2 lines: %q", got)
	}
	if got := adjustedLines(nil, 40, 2, "…", id); got != nil {
		t.Errorf("nothing adjusted: %q", got)
	}
}
