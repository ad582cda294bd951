package runstate

import (
	"math"

	"github.com/gnnscope/gnnscope/profile"
)

// FeatCache are a run's cache events (the feature cache's outcome, one
// point per training batch) as parallel arrays, with the run's totals.
type FeatCache struct {
	T        []int64 // the event's time on the run's clock
	Epoch    []int32
	Batch    []int32
	Hits     []int64 // input rows found in the device cache
	Misses   []int64 // rows gathered from the host
	BytesH2D []int64 // bytes copied host-to-device
	// Totals over every point.
	TotalHits, TotalMisses, TotalH2D int64
	// Changes counts the cache events digested, folded ones included: a
	// view keyed on it redraws when a point's figures change too.
	Changes uint64
}

// Len returns the number of points.
func (c *FeatCache) Len() int { return len(c.Hits) }

// HitRate returns point i's hit rate: hits over hits and misses (NaN for
// a batch that gathered no rows).
func (c *FeatCache) HitRate(i int) float64 { return rate(c.Hits[i], c.Misses[i]) }

// Rate returns the hit rate over the run so far (NaN without rows).
func (c *FeatCache) Rate() float64 { return rate(c.TotalHits, c.TotalMisses) }

func rate(hits, misses int64) float64 {
	n := float64(hits) + float64(misses)
	if !(n > 0) || hits < 0 || misses < 0 {
		return math.NaN()
	}
	return float64(hits) / n
}

// add digests cache event e at time t; with n > 0 a point of the same
// epoch and batch among the last n (another rank's) takes its counts.
func (c *FeatCache) add(e *profile.Event, t int64, n int) {
	c.Changes++
	c.TotalHits = addSat(c.TotalHits, max(e.Hits, 0))
	c.TotalMisses = addSat(c.TotalMisses, max(e.Misses, 0))
	c.TotalH2D = addSat(c.TotalH2D, max(e.BytesH2D, 0))
	ep, b := clamp32(e.Epoch), clamp32(e.Batch)
	for i := c.Len() - 1; i >= 0 && i >= c.Len()-n; i-- {
		if c.Epoch[i] == ep && c.Batch[i] == b {
			c.Hits[i] = addSat(c.Hits[i], max(e.Hits, 0))
			c.Misses[i] = addSat(c.Misses[i], max(e.Misses, 0))
			c.BytesH2D[i] = addSat(c.BytesH2D[i], max(e.BytesH2D, 0))
			return
		}
	}
	c.T = append(c.T, t)
	c.Epoch = append(c.Epoch, ep)
	c.Batch = append(c.Batch, b)
	c.Hits = append(c.Hits, max(e.Hits, 0))
	c.Misses = append(c.Misses, max(e.Misses, 0))
	c.BytesH2D = append(c.BytesH2D, max(e.BytesH2D, 0))
}

// addSat returns a+b for non-negative a and b, or the largest int64 when
// it would overflow.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
