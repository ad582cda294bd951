package newexp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/runner"
)

// Prefill sets the form to an existing experiment and its variants (e on
// a session: a new experiment from a copy) and returns what the form
// cannot hold, one line each: training keys it has no field for (they
// return to their defaults) and variants that are not built in.
func (m *Model) Prefill(exp runner.Experiment, variants []runner.Variant) []string {
	cfg := exp.Train
	set := func(key, value string) {
		if f := m.field(key); f != nil && f.kind == text {
			f.input.SetValue(value)
			f.input.CursorEnd()
		}
	}
	set(FieldName, exp.Name)
	if cfg.Model == "" { // a session of commands only: no engine experiment
		set(FieldRepeats, strconv.Itoa(max(exp.Repeats, 1)))
		notes := m.prefillVariants(variants)
		if cmds := m.commandFields(); len(cmds) > 1 {
			m.first = slices.Index(m.fields, cmds[0])
			notes = append(notes, "its commands are under Commands: edit them, ctrl+s launches")
		} else { // nothing the form holds: the default variants stay on
			for _, b := range runner.Builtins() {
				m.field("variant." + string(b.Name)).on = b.Default
			}
			notes = append(notes, "the session records no experiment the form can hold")
		}
		m.validate()
		return notes
	}
	set(FieldData, exp.Data)
	if err := m.SetValue(FieldModel, string(cfg.Model)); err != nil {
		return []string{err.Error()}
	}
	if s := m.field(FieldSampler); slices.Contains(s.choices, string(cfg.Sampler)) {
		s.choice = slices.Index(s.choices, string(cfg.Sampler))
	}
	fan := make([]string, len(cfg.Fanouts))
	for i, v := range cfg.Fanouts {
		fan[i] = strconv.Itoa(v)
	}
	set(FieldFanouts, strings.Join(fan, ","))
	set(FieldBatch, strconv.Itoa(cfg.BatchSize))
	set(FieldHidden, strconv.Itoa(cfg.Hidden))
	set(FieldEpochs, strconv.Itoa(cfg.Epochs))
	set(FieldLayers, strconv.Itoa(cfg.Layers))
	set(FieldLR, strconv.FormatFloat(cfg.LR, 'g', -1, 64))
	set(FieldSeed, strconv.FormatUint(cfg.Seed, 10))
	set(FieldDevice, runner.Devices()[0])
	if cfg.Device != "" {
		set(FieldDevice, cfg.Device)
	}
	set(FieldBudget, "")
	if cfg.MemBudget > 0 {
		set(FieldBudget, strconv.FormatInt(int64(cfg.MemBudget), 10))
	}
	if o := m.field(FieldOnOOM); cfg.OnOOM != "" && slices.Contains(o.choices, string(cfg.OnOOM)) {
		o.choice = slices.Index(o.choices, string(cfg.OnOOM))
	}
	set(FieldCache, cfg.CacheBytes)
	if c := m.field(FieldPolicy); slices.Contains(c.choices, string(cfg.CachePolicy)) {
		c.choice = slices.Index(c.choices, string(cfg.CachePolicy))
	} else {
		c.choice = 0
	}
	set(FieldRepeats, strconv.Itoa(max(exp.Repeats, 1)))
	notes := m.prefillVariants(variants)
	exp2, _, _ := m.Experiment()
	if lost := lostKeys(cfg, exp2.Train); len(lost) > 0 {
		notes = append(notes, "not in the form, back to their defaults: "+strings.Join(lost, ", "))
	}
	m.validate()
	return notes
}

// prefillVariants checks the built-in variants among variants and takes
// their settings (workers, prefetch, GAS parts); the others are noted.
func (m *Model) prefillVariants(variants []runner.Variant) []string {
	var notes []string
	for _, f := range m.fields {
		if f.kind == toggle {
			f.on = false
		}
	}
	intOf := func(v any) (string, bool) {
		switch n := v.(type) {
		case int:
			return strconv.Itoa(n), true
		case int64:
			return strconv.FormatInt(n, 10), true
		case float64:
			return strconv.FormatFloat(n, 'f', -1, 64), true
		case json.Number:
			return n.String(), true
		}
		return "", false
	}
	for _, v := range variants {
		if v.External != nil {
			m.prefillCommand(v)
			continue
		}
		f := m.field("variant." + v.Name)
		if f == nil {
			notes = append(notes, fmt.Sprintf("variant %s is not built in: not in the form", v.Name))
			continue
		}
		f.on = true
		for key, field := range map[string]string{"sampler_workers": FieldWorkers, "prefetch": FieldPrefetch, "parts": FieldParts} {
			if s, ok := intOf(v.Overrides[key]); ok {
				m.field(field).input.SetValue(s)
			}
		}
	}
	return notes
}

// lostKeys names the training keys whose value in want the form's config
// got does not carry, with want's value ("lr 0.005").
func lostKeys(want, got any) []string {
	a, b := map[string]any{}, map[string]any{}
	for _, p := range []struct {
		v   any
		out map[string]any
	}{{want, a}, {got, b}} {
		raw, err := json.Marshal(p.v)
		if err != nil || json.Unmarshal(raw, &p.out) != nil {
			return nil
		}
	}
	var lost []string
	for k, v := range a {
		if fmt.Sprint(v) != fmt.Sprint(b[k]) {
			lost = append(lost, fmt.Sprintf("%s %v", k, v))
		}
	}
	slices.Sort(lost)
	return lost
}
