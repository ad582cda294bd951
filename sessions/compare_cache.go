package sessions

import (
	"slices"
	"strconv"

	"github.com/gnnscope/gnnscope/profile"
)

// CacheEpoch is one epoch's feature-cache outcome in RunFigures: input
// rows found in the device cache and gathered from the host, their hit
// rate (hits over both), and the bytes copied host-to-device.
type CacheEpoch struct {
	Epoch    int     `json:"epoch"`
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	HitRate  float64 `json:"hit_rate"`
	BytesH2D int64   `json:"bytes_h2d"`
}

// setCache sets the cache figures from the run's cache totals (nil: no
// cache events, figures left unset).
func (f *RunFigures) setCache(cs *profile.CacheStats, events int64) {
	if cs == nil {
		return
	}
	f.CacheEvents = events
	rate := cs.HitRate()
	f.CacheHitRate = &rate
	if n := int64(len(cs.Epochs)); n > 0 {
		per := cs.BytesH2D / n
		f.CacheH2DPerEpoch = &per
	}
	f.CacheEpochs = make([]CacheEpoch, len(cs.Epochs))
	for i, e := range cs.Epochs {
		f.CacheEpochs[i] = CacheEpoch{Epoch: e.Epoch, Hits: e.Hits, Misses: e.Misses, HitRate: e.HitRate(), BytesH2D: e.BytesH2D}
	}
}

// HasCache reports whether any compared run recorded cache events.
func (c *Comparison) HasCache() bool {
	for i := range c.Runs {
		if c.Runs[i].CacheHitRate != nil {
			return true
		}
	}
	return false
}

// cacheRows are the cache figures, shown when a run has cache events.
var cacheRows = []figureRow{
	{"cache hit rate", "cache_hit_rate", floatCell(func(r *RunFigures) *float64 { return r.CacheHitRate }, fmtRatio), 0},
	{"cache H2D per epoch", "cache_h2d_per_epoch_bytes", bytesCell(func(r *RunFigures) *int64 { return r.CacheH2DPerEpoch }), 0},
	{"cache hit rate by epoch", "", func(r *RunFigures, _ bool) string {
		return cacheEpochRates(r.CacheEpochs, maxEpochRates)
	}, onlyHuman},
}

// maxEpochRates bounds the per-epoch hit rates a human table lists.
const maxEpochRates = 8

// cacheEpochRates lists per-epoch hit rates, two decimals, space
// separated: all of up to most epochs, else the first most-1, "..." and
// the last.
func cacheEpochRates(eps []CacheEpoch, most int) string {
	if len(eps) == 0 {
		return ""
	}
	out := make([]byte, 0, 5*min(len(eps), most)+4)
	add := func(e CacheEpoch) {
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = strconv.AppendFloat(out, e.HitRate, 'f', 2, 64)
	}
	if len(eps) <= most {
		for _, e := range eps {
			add(e)
		}
		return string(out)
	}
	for _, e := range eps[:most-1] {
		add(e)
	}
	out = append(out, " ..."...)
	add(eps[len(eps)-1])
	return string(out)
}

// figureRows returns the figures the comparison shows: figureRows, then
// the cache's when a run has cache events, the GPU's when a run has
// device-side spans, the stage ledger's when a run has one, and time to
// accuracy when a run recorded validation accuracy.
func (c *Comparison) figureRows() []figureRow {
	out := slices.Clone(figureRows)
	if c.HasCache() {
		out = append(out, cacheRows...)
	}
	if c.HasGPU() {
		out = append(out, gpuRows...)
	}
	if c.HasLedger() {
		out = append(out, ledgerRows()...)
	}
	if c.TTA != nil {
		out = append(out, ttaRows...)
	}
	return out
}
