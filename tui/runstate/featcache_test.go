package runstate

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestFeatCache: a point per batch with its hit rate, the run's totals,
// and a distributed run's ranks summed into one point per batch.
func TestFeatCache(t *testing.T) {
	cache := func(epoch, batch int, hits, misses int64) profile.Event {
		return profile.Event{T: profile.TypeCache, Epoch: epoch, Batch: batch, Hits: hits, Misses: misses, BytesH2D: 100 * misses}
	}
	evs := []profile.Event{
		{T: profile.TypeRunStart, Run: "c"},
		cache(1, 0, 30, 70), cache(1, 1, 0, 0), cache(1, 2, 75, 25), cache(1, 3, -5, 10),
	}
	r := NewRun("c")
	if r.HasCache() {
		t.Error("HasCache before any cache event")
	}
	for i := range evs {
		r.Add(&evs[i])
	}
	c := &r.FeatCache
	if !r.HasCache() || c.Len() != 4 || c.HitRate(0) != 0.3 || !math.IsNaN(c.HitRate(1)) || c.HitRate(2) != 0.75 || c.HitRate(3) != 0 {
		t.Errorf("points %d, rates %v %v %v %v", c.Len(), c.HitRate(0), c.HitRate(1), c.HitRate(2), c.HitRate(3))
	}
	if c.TotalHits != 105 || c.TotalMisses != 105 || c.TotalH2D != 10500 || c.Rate() != 0.5 {
		t.Errorf("totals %d %d %d, rate %v", c.TotalHits, c.TotalMisses, c.TotalH2D, c.Rate())
	}
	ddp := NewRun("ddp")
	evs = []profile.Event{{T: profile.TypeRunStart, Run: "ddp", World: 2}, cache(1, 0, 10, 10), cache(1, 0, 30, 0), cache(1, 1, 1, 1)}
	for i := range evs {
		ddp.Add(&evs[i])
	}
	if c := &ddp.FeatCache; c.Len() != 2 || c.HitRate(0) != 0.8 || c.Changes != 3 {
		t.Errorf("ranks: %d points, rate %v, changes %d", c.Len(), c.HitRate(0), c.Changes)
	}
	if s := NewRun("x").FeatCache.Rate(); !math.IsNaN(s) {
		t.Errorf("rate without rows %v", s)
	}
}

// TestStaleOverBatches: each stale event adds its mean and max to its
// layer's series, a figure that is not finite as NaN.
func TestStaleOverBatches(t *testing.T) {
	evs := []profile.Event{
		{T: profile.TypeStale, Epoch: 1, Batch: 0, Layer: 1, Mean: 0.5, Max: 2},
		{T: profile.TypeStale, Epoch: 1, Batch: 1, Layer: 1, Mean: math.Inf(1), Max: 3},
		{T: profile.TypeStale, Epoch: 1, Batch: 1, Layer: 2, Mean: 1.5, Max: 4},
	}
	r := NewRun("gas")
	for i := range evs {
		r.Add(&evs[i])
	}
	l := r.Layers[1]
	if len(l.Means) != 2 || l.Means[0] != 0.5 || !math.IsNaN(l.Means[1]) || l.Maxes[1] != 3 || l.Batches[1] != 1 || l.Epochs[0] != 1 {
		t.Errorf("layer 1: %+v", l)
	}
	if l := r.Layers[2]; len(l.Means) != 1 || l.Maxes[0] != 4 {
		t.Errorf("layer 2: %+v", l)
	}
}
