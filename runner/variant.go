package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// Variant is a named set of overrides of an experiment's base training
// config. Keys are train.Config's JSON names (sampler_workers, prefetch,
// overlap_eval, hidden, ...); values are JSON-compatible (numbers, strings,
// booleans, lists). Its runs are named after it, so Name must be a valid
// run name (sessions.ValidName).
type Variant struct {
	Name      string         `json:"name"`
	Overrides map[string]any `json:"overrides,omitempty"`
	// External, when set, makes the variant run a command instead of the
	// engine; it then has no overrides.
	External *External `json:"external,omitempty"`
}

// Apply returns base with the variant's overrides applied and validated
// (see ApplyOverrides); errors name the variant and the key.
func (v Variant) Apply(base train.Config) (train.Config, error) {
	cfg, err := ApplyOverrides(base, v.Overrides)
	if err != nil {
		return cfg, fmt.Errorf("variant %q: %w", v.Name, err)
	}
	return cfg, nil
}

// ConfigKeys returns the keys a spec or a variant may set: train.Config's
// JSON names, in declaration order.
func ConfigKeys() []string {
	t := reflect.TypeFor[train.Config]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// KeyError is a bad override: an unknown key, a value of the wrong type,
// or a value the config's validation refuses. Keys names the culprits.
type KeyError struct {
	Keys []string
	Err  error
}

// Error names the keys and says what is wrong with them.
func (e *KeyError) Error() string {
	q := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	what := "key"
	if len(q) > 1 {
		what = "keys"
	}
	return fmt.Sprintf("%s %s: %v", what, strings.Join(q, ", "), e.Err)
}

// Unwrap returns the underlying error.
func (e *KeyError) Unwrap() error { return e.Err }

// ApplyOverrides overlays overrides on base: base is encoded to a JSON
// object, the override keys replace its values, and the result is decoded
// into a train.Config with unknown keys refused, then validated. An error
// is a *KeyError naming the offending keys: unknown ones, ones whose value
// does not decode, or, when validation fails, the keys that fail it on
// their own (all overridden keys if only their combination does). A base
// that is invalid by itself is reported as such.
func ApplyOverrides(base train.Config, overrides map[string]any) (train.Config, error) {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	known := ConfigKeys()
	var unknown []string
	for _, k := range keys {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return base, &KeyError{Keys: unknown, Err: fmt.Errorf("unknown (known keys: %s)", strings.Join(known, ", "))}
	}
	if len(keys) == 0 {
		if err := base.Validate(); err != nil {
			return base, fmt.Errorf("base config: %w", err)
		}
		return base, nil
	}
	// Decode each key on its own first, so a type error names its key.
	for _, k := range keys {
		if _, err := overlay(base, map[string]any{k: overrides[k]}); err != nil {
			return base, &KeyError{Keys: []string{k}, Err: err}
		}
	}
	cfg, err := overlay(base, overrides)
	if err != nil {
		return base, &KeyError{Keys: keys, Err: err}
	}
	verr := cfg.Validate()
	if verr == nil {
		return cfg, nil
	}
	if err := base.Validate(); err != nil {
		return base, fmt.Errorf("base config: %w", err)
	}
	var culprits []string
	for _, k := range keys {
		one, err := overlay(base, map[string]any{k: overrides[k]})
		if err == nil && one.Validate() != nil {
			culprits = append(culprits, k)
		}
	}
	if len(culprits) == 0 {
		culprits = keys
	}
	return base, &KeyError{Keys: culprits, Err: verr}
}

// overlay encodes base, replaces the keys of over and decodes the result
// without validating it.
func overlay(base train.Config, over map[string]any) (train.Config, error) {
	var cfg train.Config
	b, err := json.Marshal(base)
	if err != nil {
		return cfg, fmt.Errorf("encode config: %w", err)
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &obj); err != nil {
		return cfg, fmt.Errorf("encode config: %w", err)
	}
	for k, v := range over {
		raw, err := json.Marshal(v)
		if err != nil {
			return cfg, fmt.Errorf("value %v: %w", v, err)
		}
		obj[k] = raw
	}
	if b, err = json.Marshal(obj); err != nil {
		return cfg, fmt.Errorf("encode config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			article := "a"
			if strings.HasPrefix(te.Value, "a") || strings.HasPrefix(te.Value, "o") {
				article = "an" // array, object
			}
			typ := te.Type.String()
			if te.Type.Kind() == reflect.String {
				typ = "string" // a typed choice (train.Sampler, memory.Rule): users write strings
			}
			return cfg, fmt.Errorf("%s %s is not a valid %s", article, te.Value, typ)
		}
		return cfg, err
	}
	return cfg, nil
}

// ConfigFromKeys builds a base config from spec keys: the defaults of the
// model the keys name (defaultModel if they name none; see
// train.Defaults), with the keys applied as overrides. As in `gnnscope
// train`, when the keys set layers but not fanouts, the default fanouts
// are cut or extended (repeating the last) to one per layer. The model
// key may be a string (a spec) or an nn.Kind (a config's field).
func ConfigFromKeys(keys map[string]any, defaultModel string) (train.Config, error) {
	model := defaultModel
	switch m := keys["model"].(type) {
	case string:
		model = m
	case nn.Kind:
		model = string(m)
	}
	base := train.Defaults(nn.Kind(model))
	if base.Validate() != nil { // an unknown model: let the override name the key
		base = train.Defaults(nn.Kind(defaultModel))
	}
	if _, ok := keys["fanouts"]; !ok {
		if cfg, err := overlay(base, pick(keys, "layers")); err == nil && cfg.Layers > 0 && cfg.Layers <= train.MaxLayers && cfg.Layers != len(base.Fanouts) {
			fan := make([]int, cfg.Layers)
			for i := range fan {
				fan[i] = base.Fanouts[min(i, len(base.Fanouts)-1)]
			}
			base.Fanouts = fan
		}
	}
	return ApplyOverrides(base, keys)
}

// pick returns the entries of m with the given keys.
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Resolved is a variant with the config it runs with.
type Resolved struct {
	Variant
	Config train.Config `json:"config"`
	// Adjusted lists what Resolve changed in the optimized variant's
	// config to fit the user's constraints (train.FitBudget), one line
	// each; run_start records it.
	Adjusted []string `json:"adjusted,omitempty"`
}

// fitConstraints adjusts the config of the optimized variant, which
// stands for the best configuration under the user's constraints: a
// feature cache that leaves room in its memory budget (fitCache) unless
// the variant or the base sets cache_bytes, then the memory guard for
// its budget (train.FitBudget) unless the variant sets mem_guard itself.
// First, what neither the variant nor the experiment sets is sized to
// this machine's cores (PlanCores on DescribeMachine; the worker sizes
// the rest by memory, PlanMemory). Other variants run as configured.
func fitConstraints(v Variant, cfg train.Config) (train.Config, []string) {
	if v.Name != string(Optimized) {
		return cfg, nil
	}
	cfg, notes := PlanCores(DescribeMachine(nil), cfg, freeSettings(v, cfg))
	if _, ok := v.Overrides["cache_bytes"]; !ok {
		var cache []string
		cfg, cache = fitCache(cfg)
		notes = append(notes, cache...)
	}
	if _, ok := v.Overrides["mem_guard"]; ok {
		return cfg, notes
	}
	cfg, fit := train.FitBudget(cfg)
	return cfg, append(notes, fit...)
}

// MaxVariants is the most variants one session runs.
const MaxVariants = 256

// Resolve applies each variant to the experiment's base config. It checks
// the experiment (when a variant runs the engine), that every variant name
// is a valid run name and that names are unique, and reports every bad
// variant at once. An external variant resolves to itself, with a zero
// Config.
func Resolve(exp Experiment, variants []Variant) ([]Resolved, error) {
	if len(variants) == 0 {
		return nil, errors.New("no variants to run")
	}
	if len(variants) > MaxVariants {
		return nil, fmt.Errorf("%d variants: at most %d run in one session", len(variants), MaxVariants)
	}
	if slices.ContainsFunc(variants, func(v Variant) bool { return v.External == nil }) {
		if err := exp.Validate(); err != nil {
			return nil, err
		}
	}
	var errs []error
	out := make([]Resolved, 0, len(variants))
	seen := map[string]bool{}
	for _, v := range variants {
		if err := checkVariantName(v.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[v.Name] {
			errs = append(errs, fmt.Errorf("variant %q is listed twice", v.Name))
			continue
		}
		seen[v.Name] = true
		if v.External != nil {
			if len(v.Overrides) > 0 {
				errs = append(errs, fmt.Errorf("variant %q runs a command: it takes no config keys", v.Name))
				continue
			}
			out = append(out, Resolved{Variant: v})
			continue
		}
		cfg, err := v.Apply(exp.Train)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if v.Name == string(Optimized) && !v.hasKey("sampler_workers") && cfg.SamplerWorkers == 0 && cfg.Sampler != train.SamplerNeighbor {
			errs = append(errs, fmt.Errorf("variant %q: key \"sampler_workers\": its sampler workers pipeline neighbor-sampled batches, and sampler %q is not (use --sampler neighbor)", v.Name, cfg.Sampler))
			continue
		}
		if err := train.CheckModelSize(cfg); err != nil {
			errs = append(errs, fmt.Errorf("variant %q: %w", v.Name, err))
			continue
		}
		cfg, adjusted := fitConstraints(v, cfg)
		out = append(out, Resolved{Variant: v, Config: cfg, Adjusted: adjusted})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// hasKey reports whether the variant's overrides name key.
func (v Variant) hasKey(key string) bool {
	_, ok := v.Overrides[key]
	return ok
}
