package profile

import (
	"cmp"
	"slices"
)

// CacheStats is the feature cache's outcome over a run (the embedded
// CacheCount) and per epoch (Epochs, in epoch order), summed over cache
// events.
type CacheStats struct {
	CacheCount
	Epochs []EpochCache `json:"epochs"`
}

// CacheCount sums cache events: rows hit and missed, bytes copied
// host-to-device.
type CacheCount struct {
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`
	BytesH2D int64 `json:"bytes_h2d"`
}

// HitRate is Hits over Hits+Misses (0 when both are 0).
func (c CacheCount) HitRate() float64 {
	if n := c.Hits + c.Misses; n > 0 {
		return float64(c.Hits) / float64(n)
	}
	return 0
}

// add adds o to c, saturating.
func (c *CacheCount) add(o CacheCount) {
	c.Hits = addSat(c.Hits, o.Hits)
	c.Misses = addSat(c.Misses, o.Misses)
	c.BytesH2D = addSat(c.BytesH2D, o.BytesH2D)
}

// EpochCache is one epoch's share of CacheStats.
type EpochCache struct {
	Epoch int `json:"epoch"`
	CacheCount
}

// cacheStats sums the cache events per epoch and in all (nil without any).
func (a *Aggregator) cacheStats() *CacheStats {
	if len(a.cache) == 0 {
		return nil
	}
	cs := &CacheStats{Epochs: make([]EpochCache, 0, len(a.cache))}
	for ep, c := range a.cache {
		cs.Epochs = append(cs.Epochs, EpochCache{Epoch: ep, CacheCount: *c})
		cs.add(*c)
	}
	slices.SortFunc(cs.Epochs, func(x, y EpochCache) int { return cmp.Compare(x.Epoch, y.Epoch) })
	return cs
}
