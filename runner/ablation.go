package runner

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/sessions"
)

// ablationPart ties an optimization of the optimized variant to the
// built-in variant that applies it alone: applies reports whether the
// optimized config (opt) has it over the base config, with sets filling
// the variant's settings so that it applies it as optimized does.
type ablationPart struct {
	name    VariantName
	applies func(base, opt train.Config) bool
	sets    func(p *VariantParams, opt train.Config)
}

// ablationParts lists the optimizations of the optimized variant, in the
// order a waterfall shows them.
func ablationParts() []ablationPart {
	return []ablationPart{
		{Pipelined, func(b, o train.Config) bool { return o.SamplerWorkers != b.SamplerWorkers || o.Prefetch != b.Prefetch },
			func(p *VariantParams, o train.Config) { p.SamplerWorkers, p.Prefetch = o.SamplerWorkers, o.Prefetch }},
		{OverlapEval, func(b, o train.Config) bool { return o.OverlapEval && !b.OverlapEval }, nil},
		{Cache, func(b, o train.Config) bool { return o.CacheBytes != b.CacheBytes || o.CachePolicy != b.CachePolicy },
			func(p *VariantParams, o train.Config) { p.CacheBytes, p.CachePolicy = o.CacheBytes, o.CachePolicy }},
		{MemGuard, func(b, o train.Config) bool { return o.MemGuard != b.MemGuard }, nil},
	}
}

// AblationParts returns, for an experiment, the optimizations its
// optimized variant applies, each as the built-in variant that applies it
// alone with the settings optimized gets (the pipeline's workers and
// depth, the cache's size and policy as fitted to the memory budget):
// pipelined, overlap-eval, cache and mem-guard, those that apply. An
// optimization that cannot run alone on the experiment's config is an
// error naming it.
func AblationParts(exp Experiment, p VariantParams) ([]Variant, error) {
	p = pipelineSet(p)
	ob, _ := LookupBuiltin(string(Optimized))
	ov := ob.Variant(p)
	opt, err := ov.Apply(exp.Train)
	if err != nil {
		return nil, err
	}
	opt, _ = fitConstraints(ov, opt)
	var out []Variant
	var errs []error
	for _, part := range ablationParts() {
		if !part.applies(exp.Train, opt) {
			continue
		}
		q := p
		if part.sets != nil {
			part.sets(&q, opt)
		}
		b, _ := LookupBuiltin(string(part.name))
		v := b.Variant(q)
		if _, err := v.Apply(exp.Train); err != nil {
			errs = append(errs, fmt.Errorf("ablation: %w", err))
			continue
		}
		out = append(out, v)
	}
	return out, errors.Join(errs...)
}

// AblationVariants returns the variants an ablation runs: the baseline,
// each optimization of the optimized variant alone (AblationParts), and
// optimized, all of them together.
func AblationVariants(exp Experiment, p VariantParams) ([]Variant, error) {
	p = pipelineSet(p) // an ablation compares parts of one fixed pipeline
	parts, err := AblationParts(exp, p)
	if err != nil {
		return nil, err
	}
	base, _ := LookupBuiltin(string(Baseline))
	opt, _ := LookupBuiltin(string(Optimized))
	out := append([]Variant{base.Variant(p)}, parts...)
	return append(out, opt.Variant(p)), nil
}

// WaterfallParts returns the optimizations of a session's optimized
// variant in waterfall order (AblationParts of the experiment the
// session recorded), each with the config of the variant that applies it
// alone, for the speedup waterfall (whatif.Session.Waterfall). It is an
// error for a session without a recorded experiment.
func WaterfallParts(s *sessions.Session) ([]whatif.PartConfig, error) {
	var exp Experiment
	if len(s.Meta.Spec) == 0 {
		return nil, fmt.Errorf("session %s has no experiment (not made by gnnscope run)", s.ID())
	}
	if err := json.Unmarshal(s.Meta.Spec, &exp); err != nil {
		return nil, fmt.Errorf("session %s: experiment: %w", s.ID(), err)
	}
	vs, err := AblationParts(exp, VariantParamsFor(exp.Train))
	out := make([]whatif.PartConfig, 0, len(vs))
	for _, v := range vs {
		cfg, aerr := v.Apply(exp.Train)
		if aerr != nil {
			continue // AblationParts reported it
		}
		raw, merr := json.Marshal(cfg)
		if merr != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Name, merr)
		}
		out = append(out, whatif.PartConfig{Name: v.Name, Config: raw})
	}
	return out, err
}

// WaterfallOptions returns the comparison options that add each
// session's speedup waterfall: the optimized variant's, split into the
// parts WaterfallParts names.
func WaterfallOptions() *sessions.WaterfallOptions {
	return &sessions.WaterfallOptions{Optimized: string(Optimized), Parts: WaterfallParts}
}

// pipelineSet returns p with the pipeline's settings set: those left to
// the machine (0) at DefaultSamplerWorkers and DefaultPrefetch.
func pipelineSet(p VariantParams) VariantParams {
	p.SamplerWorkers, p.Prefetch = orDefault(p.SamplerWorkers, DefaultSamplerWorkers), orDefault(p.Prefetch, DefaultPrefetch)
	return p
}
