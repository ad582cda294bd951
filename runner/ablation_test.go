package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/train"
)

func variantNames(vs []Variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

func TestAblationVariants(t *testing.T) {
	exp := NewExperiment("synth-tiny", "sage")
	p := DefaultVariantParams()
	vs, err := AblationVariants(exp, p)
	if err != nil {
		t.Fatal(err)
	}
	// no budget: optimized pipelines, overlaps evaluation and caches 20 %
	if got := variantNames(vs); !reflect.DeepEqual(got, []string{"baseline", "pipelined", "overlap-eval", "cache", "optimized"}) {
		t.Fatalf("ablation %v", got)
	}
	if c := vs[3].Overrides; c["cache_bytes"] != DefaultCacheShare || c["cache_policy"] != string(DefaultCachePolicy) {
		t.Errorf("cache overrides %v", c)
	}
	if _, err := Resolve(exp, vs); err != nil {
		t.Errorf("Resolve: %v", err)
	}

	// with a budget: the cache a quarter of it, as optimized gets, and
	// the memory guard
	exp.Train.MemBudget = memory.Size(256 << 20)
	vs, err = AblationVariants(exp, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := variantNames(vs); !reflect.DeepEqual(got, []string{"baseline", "pipelined", "overlap-eval", "cache", "mem-guard", "optimized"}) {
		t.Fatalf("ablation with a budget %v", got)
	}
	if c := vs[3].Overrides["cache_bytes"]; c != "64MiB" {
		t.Errorf("cache_bytes %v, want optimized's 64MiB", c)
	}
	res, err := Resolve(exp, vs)
	if err != nil {
		t.Fatal(err)
	}
	opt := res[len(res)-1].Config
	if res[3].Config.CacheBytes != opt.CacheBytes || res[4].Config.MemGuard != opt.MemGuard || res[1].Config.SamplerWorkers != opt.SamplerWorkers {
		t.Errorf("parts differ from optimized: %+v", res)
	}

	// settings of the pipeline carry over
	p.SamplerWorkers, p.Prefetch = 3, 6
	vs, _ = AblationVariants(NewExperiment("synth-tiny", "sage"), p)
	if o := vs[1].Overrides; o["sampler_workers"] != 3 || o["prefetch"] != 6 {
		t.Errorf("pipelined overrides %v", o)
	}
}

// Optimized pipelines sampled batches: on a full-batch model it does not
// apply, nor does its ablation.
func TestAblationFullBatch(t *testing.T) {
	exp := NewExperiment("synth-tiny", "gcn")
	exp.Train.Sampler = train.SamplerFull
	if _, err := AblationVariants(exp, DefaultVariantParams()); err == nil || !strings.Contains(err.Error(), "sampler_workers") {
		t.Errorf("ablation of a full-batch model: %v", err)
	}
}
