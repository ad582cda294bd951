package dashboard

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
)

// cacheRuns are a baseline and a cache variant: the same schedule, the
// second with a feature cache.
func cacheRuns() []sessions.Track {
	return []sessions.Track{
		{Run: "cache", Events: collect(synth.Options{Run: "cache", Epochs: 3, Batches: 120, Cache: true, Seed: 5})},
		{Run: "baseline", Events: collect(synth.Options{Run: "baseline", Epochs: 3, Batches: 120, Seed: 1})},
	}
}

// TestGoldenCache: a run with cache events shows its hit rate beside the
// memory chart when wide, under it when narrow; a run without has none.
func TestGoldenCache(t *testing.T) {
	m := finishedTracks(t, common.Options{NoColor: true}, 120, 40, cacheRuns())
	out := m.View()
	golden.Check(t, "cache_120x40", out)
	if !strings.Contains(out, "Cache hit rate") {
		t.Error("no hit-rate chart for the cache run")
	}
	m.Update(press("tab"))
	if strings.Contains(m.View(), "Cache hit rate") {
		t.Error("a hit-rate chart for the baseline")
	}
	n := finishedTracks(t, common.Options{NoColor: true, ASCII: true}, 64, 40, cacheRuns())
	narrow := n.View()
	golden.ASCII(t, narrow)
	golden.Check(t, "cache_ascii_64x40", narrow)
	mem, hit := lineOf(narrow, "Memory"), lineOf(narrow, "Cache hit rate")
	if mem < 0 || hit <= mem {
		t.Errorf("narrow: memory at line %d, hit rate at %d (want it under)", mem, hit)
	}
	for w := 0; w <= 130; w += 7 {
		for h := 0; h <= 40; h += 3 {
			n.SetSize(w, h)
			if !golden.Fits(t, "dashboard with a cache", n.View(), w, h) {
				t.FailNow()
			}
		}
	}
}

func lineOf(view, prefix string) int {
	for i, l := range strings.Split(ansi.Strip(view), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return i
		}
	}
	return -1
}
