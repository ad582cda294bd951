package sessions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCompareCache: a run with cache events gets its hit rate, its mean
// host-to-device bytes per epoch and per-epoch figures; the tables show
// the cache rows only when a run has them.
func TestCompareCache(t *testing.T) {
	st := newStore(t)
	base, opt := handRuns()
	// epoch 1: 30 hits, 70 misses; epoch 2: 60 and 40 over two batches
	opt.cache = [][3]int64{{1, 30, 70}, {2, 20, 20}, {2, 40, 20}}
	s := handSession(t, st, "cache", `{"data":"synth-tiny"}`, base, opt)
	c := compareSession(t, st, s)
	b, o := c.Runs[0], c.Runs[1]
	if b.CacheHitRate != nil || b.CacheEpochs != nil || !c.HasCache() {
		t.Errorf("baseline cache %v %v, HasCache %v", b.CacheHitRate, b.CacheEpochs, c.HasCache())
	}
	if o.CacheEvents != 3 || o.CacheHitRate == nil || !near(*o.CacheHitRate, 90.0/200) ||
		o.CacheH2DPerEpoch == nil || *o.CacheH2DPerEpoch != 400*110/2 {
		t.Errorf("optimized: events %d, rate %v, h2d %v", o.CacheEvents, o.CacheHitRate, o.CacheH2DPerEpoch)
	}
	want := []CacheEpoch{{Epoch: 1, Hits: 30, Misses: 70, HitRate: 0.3, BytesH2D: 28000}, {Epoch: 2, Hits: 60, Misses: 40, HitRate: 0.6, BytesH2D: 16000}}
	if !slices.Equal(o.CacheEpochs, want) {
		t.Errorf("epochs %+v, want %+v", o.CacheEpochs, want)
	}
	var md bytes.Buffer
	if err := c.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| cache hit rate |  | 0.450 |", "| cache H2D per epoch |  | 21.5 KiB |", "| cache hit rate by epoch |  | 0.30 0.60 |"} {
		if !strings.Contains(md.String(), row) {
			t.Errorf("markdown lacks %q:\n%s", row, md.String())
		}
	}
	var cs bytes.Buffer
	if err := c.CSV(&cs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(recs[0], "cache_h2d_per_epoch_bytes")
	if i < 0 || recs[2][i] != "22000" || recs[1][i] != "" || slices.Contains(recs[0], "") {
		t.Errorf("csv header %v, rows %v", recs[0], recs[1:])
	}
	var js bytes.Buffer
	if err := c.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []struct {
			HitRate *float64     `json:"cache_hit_rate"`
			Epochs  []CacheEpoch `json:"cache_epochs"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Runs[0].HitRate != nil || !slices.Equal(back.Runs[1].Epochs, want) {
		t.Errorf("json: %v\n%s", err, js.String())
	}

	// without cache events no cache row is shown
	s2 := handSession(t, st, "plain", `{"data":"synth-tiny"}`, base)
	c2 := compareSession(t, st, s2)
	md.Reset()
	if err := c2.Markdown(&md); err != nil || strings.Contains(md.String(), "cache") || c2.HasCache() {
		t.Errorf("no cache: %v\n%s", err, md.String())
	}
}

func TestCacheEpochRates(t *testing.T) {
	var eps []CacheEpoch
	for i := range 12 {
		eps = append(eps, CacheEpoch{Epoch: i + 1, HitRate: float64(i) / 20})
	}
	if got := cacheEpochRates(eps[:3], 8); got != "0.00 0.05 0.10" {
		t.Errorf("3 epochs: %q", got)
	}
	if got := cacheEpochRates(eps, 4); got != "0.00 0.05 0.10 ... 0.55" {
		t.Errorf("12 epochs: %q", got)
	}
	if got := cacheEpochRates(nil, 4); got != "" {
		t.Errorf("none: %q", got)
	}
}
