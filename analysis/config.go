package analysis

import (
	"encoding/json"

	"github.com/gnnscope/gnnscope/profile"
)

// RunConfig is what the advice needs to know of a run's configuration,
// read from its run_start: the engine's config keys, or an external
// run's ("external": true; num_workers and pin_memory where the trainer
// recorded them).
type RunConfig struct {
	External       bool    `json:"external,omitempty"`
	Sampler        string  `json:"sampler,omitempty"`
	SamplerWorkers int     `json:"sampler_workers,omitempty"`
	Prefetch       int     `json:"prefetch,omitempty"`
	OverlapEval    bool    `json:"overlap_eval,omitempty"`
	EvalEvery      int     `json:"eval_every,omitempty"`
	EvalCut        float64 `json:"eval_cut,omitempty"`
	Device         string  `json:"device,omitempty"`
	AsyncTransfer  bool    `json:"async_transfer,omitempty"`
	CacheBytes     string  `json:"cache_bytes,omitempty"`
	FeatureStore   string  `json:"feature_store,omitempty"`
	SamplerDevice  string  `json:"sampler_device,omitempty"`
	MemGuard       string  `json:"mem_guard,omitempty"`
	Parts          int     `json:"parts,omitempty"`
	PartsPerBatch  int     `json:"parts_per_batch,omitempty"`
	NumWorkers     *int    `json:"num_workers,omitempty"`
	PinMemory      *bool   `json:"pin_memory,omitempty"`

	// Cores is run_start's host.cores (0 where unknown).
	Cores int `json:"cores,omitempty"`
}

// parseConfig reads a run_start's config; keys it does not know and
// values of another type are left at their zero value.
func parseConfig(e *profile.Event) RunConfig {
	var c RunConfig
	if len(e.Config) > 0 {
		// A value of the wrong type leaves its field unset; the others
		// are still read.
		_ = json.Unmarshal(e.Config, &c)
	}
	if e.Host != nil {
		c.Cores = e.Host.Cores
	}
	return c
}

// OnCUDA reports whether the run trained on a CUDA device.
func (c *RunConfig) OnCUDA() bool {
	return len(c.Device) >= 4 && c.Device[:4] == "cuda"
}

// HasCache reports whether the run had a device feature cache.
func (c *RunConfig) HasCache() bool {
	return c.CacheBytes != "" && c.CacheBytes != "0"
}
