package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
)

// VariantName is the name of a built-in variant.
type VariantName string

// The built-in variants (see Builtins).
const (
	Baseline    VariantName = profile.VariantBaseline
	Optimized   VariantName = "optimized"
	Pipelined   VariantName = "pipelined"
	OverlapEval VariantName = "overlap-eval"
	MemGuard    VariantName = "mem-guard"
	GAS         VariantName = "gas"
	Cache       VariantName = "cache"
)

// Default settings of the built-in variants that take settings.
const (
	DefaultSamplerWorkers = 2  // pipelined; optimized sizes them to the machine (PlanCores)
	DefaultPrefetch       = 4  // pipelined; optimized sizes it to the memory left (PlanMemory)
	DefaultGASParts       = 32 // gas
	DefaultGASPartsBatch  = 8  // gas: parts per mini-batch
)

// VariantParams are the settings some built-in variants take: the
// pipeline of optimized and pipelined, the graph parts of gas, the
// feature cache of cache.
type VariantParams struct {
	// SamplerWorkers and Prefetch are the pipeline's settings; 0 leaves
	// optimized's sized to the machine (PlanCores, PlanMemory) and
	// pipelined's at DefaultSamplerWorkers and DefaultPrefetch.
	SamplerWorkers int
	Prefetch       int
	Parts          int
	PartsPerBatch  int
	// CacheBytes and CachePolicy are the cache variant's cache_bytes and
	// cache_policy.
	CacheBytes  string
	CachePolicy featcache.Policy
}

// DefaultVariantParams returns the default settings: the pipeline sized
// to the machine (0), DefaultGASParts, DefaultGASPartsBatch,
// DefaultCacheShare and DefaultCachePolicy.
func DefaultVariantParams() VariantParams {
	return VariantParams{
		Parts:         DefaultGASParts,
		PartsPerBatch: DefaultGASPartsBatch,
		CacheBytes:    DefaultCacheShare,
		CachePolicy:   DefaultCachePolicy,
	}
}

// VariantParamsFor returns the settings for variants of an experiment
// whose base config is base: the defaults, except that gas keeps the
// graph parts the base sets (Parts > 0, and PartsPerBatch when positive)
// and cache the cache size and policy it sets (a cache_bytes of "0", no
// cache, leaves the default size).
func VariantParamsFor(base train.Config) VariantParams {
	p := DefaultVariantParams()
	if base.Parts > 0 {
		p.Parts = base.Parts
		if base.PartsPerBatch > 0 {
			p.PartsPerBatch = base.PartsPerBatch
		}
	}
	if b, err := featcache.ParseBudget(base.CacheBytes); err == nil && !b.IsZero() {
		p.CacheBytes = base.CacheBytes
	}
	if base.CachePolicy != "" {
		p.CachePolicy = base.CachePolicy
	}
	return p
}

// Builtin is an entry of the catalog of built-in variants.
type Builtin struct {
	Name VariantName
	// Help says in one line what the variant changes.
	Help string
	// Default marks the variants run when none is named (baseline and
	// optimized).
	Default bool
	// Pipeline marks the variants whose overrides take SamplerWorkers
	// and Prefetch of VariantParams.
	Pipeline bool
	// overrides builds the variant's overrides from the settings.
	overrides func(VariantParams) map[string]any
}

// Variant returns the variant with its overrides built from p.
func (b Builtin) Variant(p VariantParams) Variant {
	return Variant{Name: string(b.Name), Overrides: b.overrides(p)}
}

// Builtins returns the catalog of built-in variants, in the order lists
// show them; help texts give the default settings. A variant's overrides
// need what its config checks: mem-guard a memory budget and neighbor
// sampling, gas a model that trains on graph parts without overlapped
// evaluation, cache mini-batches (neighbor or gas sampling; gas with the
// degree policy). Optimized also gets a feature cache
// at launch when the config has none (see fitCache): its size depends on
// the memory budget, so it is not among its overrides.
func Builtins() []Builtin {
	return []Builtin{
		{Name: Baseline, Default: true, Help: "sample, gather, train in turn",
			overrides: func(VariantParams) map[string]any { return nil }},
		{Name: Optimized, Default: true, Pipeline: true, Help: "workers, prefetch, eval overlap, cache",
			overrides: func(p VariantParams) map[string]any {
				o := map[string]any{"overlap_eval": true}
				if p.SamplerWorkers > 0 {
					o["sampler_workers"] = p.SamplerWorkers
				}
				if p.Prefetch > 0 {
					o["prefetch"] = p.Prefetch
				}
				return o
			}},
		{Name: Pipelined, Pipeline: true, Help: "sampler workers and prefetch",
			overrides: func(p VariantParams) map[string]any {
				return map[string]any{"sampler_workers": orDefault(p.SamplerWorkers, DefaultSamplerWorkers), "prefetch": orDefault(p.Prefetch, DefaultPrefetch)}
			}},
		{Name: OverlapEval, Help: "eval during the next epoch",
			overrides: func(VariantParams) map[string]any { return map[string]any{"overlap_eval": true} }},
		{Name: MemGuard, Help: "split batches over the budget",
			overrides: func(VariantParams) map[string]any { return map[string]any{"mem_guard": string(train.GuardSplit)} }},
		{Name: GAS, Help: fmt.Sprintf("GNNAutoScale, %d parts, %d a batch", DefaultGASParts, DefaultGASPartsBatch),
			overrides: func(p VariantParams) map[string]any {
				return map[string]any{"sampler": string(train.SamplerGAS), "parts": p.Parts, "parts_per_batch": p.PartsPerBatch}
			}},
		{Name: Cache, Help: fmt.Sprintf("baseline + feature cache (%s, %s)", DefaultCacheShare, DefaultCachePolicy),
			overrides: func(p VariantParams) map[string]any {
				return map[string]any{"cache_bytes": p.CacheBytes, "cache_policy": string(p.CachePolicy)}
			}},
	}
}

// BuiltinNames returns the names of the built-in variants, in catalog
// order.
func BuiltinNames() []string {
	bs := Builtins()
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b.Name)
	}
	return out
}

// LookupBuiltin returns the built-in variant of a name.
func LookupBuiltin(name string) (Builtin, bool) {
	bs := Builtins()
	i := slices.IndexFunc(bs, func(b Builtin) bool { return string(b.Name) == name })
	if i < 0 {
		return Builtin{}, false
	}
	return bs[i], true
}

// DefaultVariants returns the variants run when none is named: the
// built-in ones marked Default (baseline and optimized) with the default
// settings.
func DefaultVariants() []Variant {
	var out []Variant
	for _, b := range Builtins() {
		if b.Default {
			out = append(out, b.Variant(DefaultVariantParams()))
		}
	}
	return out
}

// SelectVariants picks variants by name from defined (a spec's) and the
// built-in ones, built with p; a defined variant replaces a built-in one
// of the same name. With no names it returns defined if not empty, else
// DefaultVariants. A name that is not a valid variant name is an error
// saying why; an unknown name is an error listing the available ones.
func SelectVariants(defined []Variant, names []string, p VariantParams) ([]Variant, error) {
	avail := slices.Clone(defined)
	for _, b := range Builtins() {
		if !slices.ContainsFunc(avail, func(v Variant) bool { return v.Name == string(b.Name) }) {
			avail = append(avail, b.Variant(p))
		}
	}
	if len(names) == 0 {
		if len(defined) > 0 {
			return slices.Clone(defined), nil
		}
		return DefaultVariants(), nil
	}
	var out []Variant
	var unknown []string
	for _, n := range names {
		if err := checkVariantName(n); err != nil {
			return nil, err
		}
		i := slices.IndexFunc(avail, func(v Variant) bool { return v.Name == n })
		if i < 0 {
			unknown = append(unknown, fmt.Sprintf("%q", n))
			continue
		}
		out = append(out, avail[i])
	}
	if len(unknown) > 0 {
		all := make([]string, len(avail))
		for i, v := range avail {
			all[i] = v.Name
		}
		what := "variant"
		if len(unknown) > 1 {
			what = "variants"
		}
		return nil, fmt.Errorf("unknown %s %s (available: %s)", what, strings.Join(unknown, ", "), strings.Join(all, ", "))
	}
	return out, nil
}

// orDefault returns n, or def when n is not positive.
func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
