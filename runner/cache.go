package runner

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile/units"
)

// Defaults of the feature cache the built-in variants add.
const (
	// DefaultCacheShare is the cache variant's size, and optimized's
	// without a memory budget: a share of the feature matrix's rows.
	DefaultCacheShare = "20%"
	// DefaultCachePolicy is the rows they cache: the highest-degree ones.
	DefaultCachePolicy = featcache.PolicyDegree
	// minFitCache is the smallest cache optimized takes from a memory
	// budget; a budget whose quarter is smaller leaves no room for one.
	minFitCache = 1 << 20
)

// fitCache gives the optimized variant a feature cache when its config
// has none (cache_bytes unset, "" ; "0" is a deliberate none) and trains
// on neighbor-sampled batches. With a memory budget the cache takes a
// quarter of it, rounded down to whole MiB, so that three quarters stay
// for the model, the batches and evaluation (the engine's plan and the
// memory guard work within those); a budget whose quarter is under 1 MiB
// leaves no room and gets no cache. Without a budget it caches
// DefaultCacheShare of the feature rows. The note says what was chosen
// and why, as run_start's adjusted lines do.
func fitCache(cfg train.Config) (train.Config, []string) {
	if cfg.CacheBytes != "" || cfg.Sampler != train.SamplerNeighbor {
		return cfg, nil
	}
	out := cfg
	var note string
	if budget := int64(cfg.MemBudget); budget > 0 {
		mib := budget / 4 >> 20
		if mib<<20 < minFitCache {
			return cfg, nil
		}
		out.CacheBytes = fmt.Sprintf("%dMiB", mib)
		note = fmt.Sprintf("cache_bytes off->%s: a quarter of the memory budget %s (whole MiB), three quarters left to the model, the batches and evaluation",
			out.CacheBytes, units.FormatSize(budget))
	} else {
		out.CacheBytes = DefaultCacheShare
		note = fmt.Sprintf("cache_bytes off->%s: no memory budget, so the default share of the feature rows", DefaultCacheShare)
	}
	if out.CachePolicy == "" {
		out.CachePolicy = DefaultCachePolicy
	}
	if out.Validate() != nil {
		return cfg, nil
	}
	return out, []string{note}
}
