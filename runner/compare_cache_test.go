package runner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestCompareCacheColumns: HIT RATE and H2D/EPOCH appear when a run has
// cache events, "-" for the others, and they go in the JSON.
func TestCompareCacheColumns(t *testing.T) {
	_, s := newSession(t, "cache")
	writeRun(t, s, "baseline", []float64{1, 1}, profile.StatusOK, nil)
	plain, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plain.Columns() {
		if c.Title == "HIT RATE" || c.Title == "H2D/EPOCH" {
			t.Errorf("column %s without cache events", c.Title)
		}
	}
	recordJournal(t, s, "cache", func(rec *profile.Recorder) error {
		rec.RunStart("cache", s.ID(), "cache", json.RawMessage(`{"epochs":2}`), &profile.Host{Cores: 2})
		for ep := 1; ep <= 2; ep++ {
			rec.Span(profile.StageTrain, profile.LaneCompute, ep, 0, int64(ep-1)*1e9, 5e8)
			rec.Cache(ep, 0, 75, 25, 3<<20) // 75 % hits, 3 MiB a batch
			rec.Cache(ep, 1, 75, 25, 3<<20)
		}
		return rec.Close(profile.StatusOK, nil, nil)
	})
	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	var hdr, base, cache []string
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "VARIANT":
			hdr = f
		case len(f) > 0 && f[0] == "baseline":
			base = f
		case len(f) > 0 && f[0] == "cache":
			cache = f
		}
	}
	// the last two columns: HIT RATE (two header words), H2D/EPOCH (a
	// value of two words: "6.0 MiB")
	if n := len(hdr); n < 3 || hdr[n-3] != "HIT" || hdr[n-1] != "H2D/EPOCH" {
		t.Fatalf("header %q:\n%s", hdr, out.String())
	}
	if n := len(cache); cache[n-3] != "0.750" || cache[n-2] != "6.0" || cache[n-1] != "MiB" {
		t.Errorf("cache row %q:\n%s", cache, out.String())
	}
	if n := len(base); base[n-2] != "-" || base[n-1] != "-" {
		t.Errorf("baseline row %q", base)
	}
	// at 100 columns the hit rate stays, before the spread and stages
	tab.Width = 100
	out.Reset()
	if err := tab.Render(&out); err != nil || !strings.Contains(out.String(), "HIT RATE") {
		t.Errorf("100 columns (%v):\n%s", err, out.String())
	}
	b, err := json.Marshal(tab)
	if err != nil || !strings.Contains(string(b), `"cache_hit_rate":0.75`) || !strings.Contains(string(b), `"cache_h2d_per_epoch_bytes":6291456`) {
		t.Errorf("json %v: %s", err, b)
	}
}
