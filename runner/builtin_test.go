package runner

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestBuiltinsAccepted(t *testing.T) {
	names := BuiltinNames()
	if !slices.Equal(names, []string{"baseline", "optimized", "pipelined", "overlap-eval", "mem-guard", "gas", "cache"}) {
		t.Errorf("catalog %v", names)
	}
	for _, b := range Builtins() {
		if err := sessions.ValidName(string(b.Name)); err != nil || b.Help == "" || strings.Contains(b.Help, "\n") {
			t.Errorf("%s: name %v, help %q", b.Name, err, b.Help)
		}
		got, err := SelectVariants(nil, []string{string(b.Name)}, DefaultVariantParams())
		if err != nil || len(got) != 1 || got[0].Name != string(b.Name) {
			t.Errorf("SelectVariants(%s) = %v, %v", b.Name, got, err)
		}
		if lb, ok := LookupBuiltin(string(b.Name)); !ok || lb.Name != b.Name {
			t.Errorf("LookupBuiltin(%s) = %v, %v", b.Name, lb.Name, ok)
		}
	}
	if _, ok := LookupBuiltin("turbo"); ok {
		t.Error("LookupBuiltin found turbo")
	}
	// every built-in variant applies to a base that has what it needs
	base := train.Defaults("sage")
	base.MemBudget = memory.Size(512 << 20)
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train = base
	all, err := SelectVariants(nil, names, DefaultVariantParams())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(exp, all); err != nil {
		t.Errorf("Resolve(all built-ins): %v", err)
	}
	_, err = SelectVariants(nil, []string{"baseline", "turbo"}, DefaultVariantParams())
	if err == nil || !strings.Contains(err.Error(), `unknown variant "turbo"`) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("unknown variant: %v", err)
	}
}

func TestBuiltinOverrides(t *testing.T) {
	p := VariantParams{SamplerWorkers: 3, Prefetch: 5, Parts: 40, PartsPerBatch: 10, CacheBytes: "1GiB", CachePolicy: "frequency"}
	want := map[VariantName]map[string]any{
		Baseline:    nil,
		Optimized:   {"sampler_workers": 3, "prefetch": 5, "overlap_eval": true},
		Pipelined:   {"sampler_workers": 3, "prefetch": 5},
		OverlapEval: {"overlap_eval": true},
		MemGuard:    {"mem_guard": "split"},
		GAS:         {"sampler": "gas", "parts": 40, "parts_per_batch": 10},
		Cache:       {"cache_bytes": "1GiB", "cache_policy": "frequency"},
	}
	for _, b := range Builtins() {
		v := b.Variant(p)
		if !reflect.DeepEqual(v.Overrides, want[b.Name]) {
			t.Errorf("%s: overrides %v, want %v", b.Name, v.Overrides, want[b.Name])
		}
		if _, uses := v.Overrides["sampler_workers"]; uses != b.Pipeline {
			t.Errorf("%s: Pipeline %v, overrides %v", b.Name, b.Pipeline, v.Overrides)
		}
		// with the pipeline left to the machine, optimized names no workers
		if _, uses := b.Variant(DefaultVariantParams()).Overrides["sampler_workers"]; uses != (b.Name == Pipelined) {
			t.Errorf("%s: Pipeline %v, overrides %v", b.Name, b.Pipeline, v.Overrides)
		}
	}
	def := DefaultVariants()
	if len(def) != 2 || def[0].Name != string(Baseline) || def[1].Name != string(Optimized) ||
		!reflect.DeepEqual(def[1].Overrides, map[string]any{"overlap_eval": true}) {
		t.Errorf("DefaultVariants %+v", def)
	}
	// gas keeps the parts the base sets
	base := train.Defaults("gcn")
	if got := VariantParamsFor(base); got != DefaultVariantParams() {
		t.Errorf("params for a base without parts: %+v", got)
	}
	base.Parts, base.PartsPerBatch = 40, 10
	if got := VariantParamsFor(base); got.Parts != 40 || got.PartsPerBatch != 10 || got.SamplerWorkers != 0 {
		t.Errorf("params for a base with parts: %+v", got)
	}
	// cache keeps the cache the base sets, but not a "0" (none)
	if got := VariantParamsFor(base); got.CacheBytes != "20%" || got.CachePolicy != "degree" {
		t.Errorf("params for a base without a cache: %+v", got)
	}
	base.CacheBytes, base.CachePolicy = "0", "frequency"
	if got := VariantParamsFor(base); got.CacheBytes != "20%" || got.CachePolicy != "frequency" {
		t.Errorf("params for a base with cache_bytes 0: %+v", got)
	}
	base.CacheBytes = "256MiB"
	if got := VariantParamsFor(base); got.CacheBytes != "256MiB" {
		t.Errorf("params for a base with a cache: %+v", got)
	}
}
