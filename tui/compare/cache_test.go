package compare

import (
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// TestCacheRows: the table has the cache's rows only when a run has
// cache figures, "-" for the runs without.
func TestCacheRows(t *testing.T) {
	rate, h2d := 0.75, int64(3<<20)
	m := &Model{cmp: &sessions.Comparison{Runs: []sessions.RunFigures{{Label: "baseline"}, {Label: "cache"}}}}
	_, rows, _ := m.table()
	if slices.ContainsFunc(rows, func(r []string) bool { return r[0] == "cache hit rate" }) {
		t.Error("cache rows without cache figures")
	}
	m.cmp.Runs[1].CacheHitRate, m.cmp.Runs[1].CacheH2DPerEpoch = &rate, &h2d
	_, rows, _ = m.table()
	i := slices.IndexFunc(rows, func(r []string) bool { return r[0] == "cache hit rate" })
	if i < 0 || !slices.Equal(rows[i], []string{"cache hit rate", "-", "0.750"}) ||
		!slices.Equal(rows[i+1], []string{"cache H2D/epoch", "-", "3.0 MiB"}) {
		t.Errorf("rows %q", rows)
	}
}
