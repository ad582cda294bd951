package newexp

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/gnnscope/gnnscope/runner"
)

// variantParams returns the settings of the built-in variants: the
// sampler workers and prefetch fields over the defaults. pipeErr names
// the first of the two fields that is not a whole number ("" if none);
// variants that take them cannot be built then.
func (m *Model) variantParams() (p runner.VariantParams, pipeErr string) {
	p = runner.DefaultVariantParams()
	w, err := strconv.Atoi(m.value(FieldWorkers))
	if err != nil {
		return p, FieldWorkers
	}
	pf, err := strconv.Atoi(m.value(FieldPrefetch))
	if err != nil {
		return p, FieldPrefetch
	}
	p.SamplerWorkers, p.Prefetch = w, pf
	return p, ""
}

// gasParts returns the gas variant's number of parts (the field over the
// default), or false when the field is not a whole number.
func (m *Model) gasParts(p runner.VariantParams) (runner.VariantParams, bool) {
	parts, err := strconv.Atoi(m.value(FieldParts))
	if err != nil {
		return p, false
	}
	p.Parts = parts
	return p, true
}

// trainKeys collects the [train] keys the form sets; parse errors go to
// their fields.
func (m *Model) trainKeys(errs map[string]string) map[string]any {
	keys := map[string]any{"model": m.value(FieldModel), "sampler": m.value(FieldSampler)}
	if s := m.value(FieldFanouts); s != "" {
		var fan []int
		for _, part := range strings.Split(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				errs[FieldFanouts] = fmt.Sprintf("%q is not a whole number", strings.TrimSpace(part))
				fan = nil
				break
			}
			fan = append(fan, v)
		}
		if fan != nil {
			keys["fanouts"] = fan
		}
	}
	if s := m.value(FieldLR); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err != nil {
			errs[FieldLR] = fmt.Sprintf("%q is not a number", s)
		} else {
			keys[FieldLR] = v
		}
	}
	if s := m.value(FieldDevice); s != "" && s != runner.Devices()[0] {
		keys[FieldDevice] = s
	}
	for _, k := range []string{FieldBatch, FieldHidden, FieldLayers, FieldEpochs, FieldSeed} {
		s := m.value(k)
		if s == "" {
			errs[k] = "required"
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			errs[k] = fmt.Sprintf("%q is not a whole number", s)
			continue
		}
		keys[k] = v
	}
	if s := m.value(FieldBudget); s != "" {
		keys["mem_budget"] = s
	}
	if s := m.value(FieldOnOOM); s != runner.OOMActions()[0] { // not the default
		keys["on_oom"] = s
	}
	cache := m.value(FieldCache)
	if cache != "" {
		keys["cache_bytes"] = cache
	}
	if s := m.value(FieldPolicy); s != string(runner.DefaultCachePolicy) || cache != "" {
		keys["cache_policy"] = s // with a cache, said even when the default
	}
	return keys
}

// Experiment builds the experiment and its variants from the form, with
// the errors of each field (empty when it can launch).
func (m *Model) Experiment() (runner.Experiment, []runner.Variant, map[string]string) {
	errs := map[string]string{}
	exp := runner.Experiment{Name: m.value(FieldName), Data: m.value(FieldData), Split: runner.DefaultSplit()}
	if exp.Data == "" {
		errs[FieldData] = "give a dataset (a preset such as synth-tiny, or a file)"
	} else if err := runner.CheckDataset(exp.Data); err != nil {
		errs[FieldData] = firstLine(err.Error())
	}
	keys := m.trainKeys(errs)
	cfg, err := runner.ConfigFromKeys(keys, m.value(FieldModel))
	if err != nil {
		var ke *runner.KeyError
		if !errors.As(err, &ke) {
			errs[FieldLaunch] = err.Error()
		} else {
			for _, k := range ke.Keys {
				if _, ok := errs[k]; !ok {
					errs[k] = keyError(keys, k, ke)
				}
			}
		}
	}
	exp.Train = cfg
	if r, err := strconv.Atoi(m.value(FieldRepeats)); err != nil || r < 1 || r > runner.MaxRuns {
		errs[FieldRepeats] = fmt.Sprintf("a whole number from 1 to %d", runner.MaxRuns)
	} else if r > 1 {
		exp.Repeats = r
	}
	baseOK := len(errs) == 0
	var variants []runner.Variant
	params, pipeErr := m.variantParams()
	params, partsOK := m.gasParts(params)
	if baseOK {
		// the cache variant caches what the form's cache fields say
		cp := runner.VariantParamsFor(exp.Train)
		params.CacheBytes, params.CachePolicy = cp.CacheBytes, cp.CachePolicy
	}
	for _, f := range m.fields {
		if f.kind != toggle || !f.on || f.variant == nil {
			continue
		}
		if f.variant.Pipeline && pipeErr != "" {
			errs[pipeErr] = "not a whole number"
			continue
		}
		if f.variant.Name == runner.GAS && !partsOK {
			errs[FieldParts] = "not a whole number"
			continue
		}
		v := f.variant.Variant(params)
		if baseOK {
			if _, err := v.Apply(exp.Train); err != nil {
				var ke *runner.KeyError
				if errors.As(err, &ke) {
					errs[f.key] = trimConfig(ke.Err.Error())
				} else {
					errs[f.key] = strings.TrimPrefix(err.Error(), fmt.Sprintf("variant %q: ", v.Name))
				}
			}
		}
		variants = append(variants, v)
	}
	if m.field(FieldAblation).on {
		variants = m.ablation(exp, params, baseOK, pipeErr, errs)
	}
	cmds := m.commands(variantNames(variants), errs)
	if !m.toggled() && m.filledCommands() { // commands alone: the engine's fields do not matter
		commandsOnly(errs)
		exp = runner.Experiment{Name: exp.Name, Repeats: exp.Repeats}
	}
	variants = append(variants, cmds...)
	if len(variants) == 0 && errs[FieldAblation] == "" && !m.filledCommands() {
		errs[FieldLaunch] = "choose at least one variant (space toggles) or give a command"
	}
	if len(errs) == 0 {
		if _, err := runner.Resolve(exp, variants); err != nil {
			errs[FieldLaunch] = err.Error()
		}
	}
	return exp, variants, errs
}

// ablation returns the variants of an ablation (runner.AblationVariants)
// in place of the toggled ones, or none with the reason in errs.
func (m *Model) ablation(exp runner.Experiment, params runner.VariantParams, baseOK bool, pipeErr string, errs map[string]string) []runner.Variant {
	if pipeErr != "" {
		errs[pipeErr] = "not a whole number"
		return nil
	}
	if !baseOK {
		return nil
	}
	vs, err := runner.AblationVariants(exp, params)
	if err != nil {
		errs[FieldAblation] = trimConfig(firstLine(err.Error()))
		return nil
	}
	return vs
}

// trimConfig drops the prefix of train.Config's validation errors.
func trimConfig(s string) string { return strings.TrimPrefix(s, "invalid training config: ") }

// keyError is the error of one key that the config refused: what the
// model's defaults with that key alone say, so that each field shows its
// own problem; the combined error when the key fails only with others.
func keyError(keys map[string]any, k string, combined *runner.KeyError) string {
	model, _ := keys["model"].(string)
	one := map[string]any{k: keys[k]}
	if k != "model" {
		one["model"] = model
	}
	if _, err := runner.ConfigFromKeys(one, model); err != nil {
		var ke *runner.KeyError
		if errors.As(err, &ke) {
			return trimConfig(ke.Err.Error())
		}
		return trimConfig(err.Error())
	}
	return trimConfig(combined.Err.Error())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// validate recomputes the inline errors (a launch error stays until the
// next launch).
func (m *Model) validate() map[string]string {
	_, _, errs := m.Experiment()
	for _, f := range m.fields {
		f.err = errs[f.key]
	}
	if m.err != "" && errs[FieldLaunch] == "" {
		m.field(FieldLaunch).err = m.err
	}
	return errs
}

// Spec returns the experiment as a TOML spec that `gnnscope run --spec`
// reads back to the same experiment and variants.
func (m *Model) Spec(exp runner.Experiment, variants []runner.Variant) ([]byte, error) {
	engine := slices.ContainsFunc(variants, func(v runner.Variant) bool { return v.External == nil })
	errs := map[string]string{}
	var keys map[string]any
	if engine {
		if keys = m.trainKeys(errs); len(errs) > 0 {
			return nil, errors.New("the form has errors")
		}
	}
	var b bytes.Buffer
	b.WriteString("# written by the gnnscope workbench; rerun with: gnnscope run --spec spec.toml\n")
	top, err := toml.Marshal(struct {
		Name    string `toml:"name,omitempty"`
		Data    string `toml:"data,omitempty"`
		Repeats int    `toml:"repeats,omitzero"`
	}{exp.Name, exp.Data, exp.Repeats})
	if err != nil {
		return nil, err
	}
	b.Write(top)
	if engine {
		train, err := toml.Marshal(keys)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n[train]\n")
		b.Write(train)
	}
	for _, v := range variants {
		if v.External != nil {
			if err := writeExternal(&b, v); err != nil {
				return nil, err
			}
			continue
		}
		fmt.Fprintf(&b, "\n[variants.%s]\n", v.Name)
		if len(v.Overrides) > 0 {
			over, err := toml.Marshal(v.Overrides)
			if err != nil {
				return nil, err
			}
			b.Write(over)
		}
	}
	return b.Bytes(), nil
}
