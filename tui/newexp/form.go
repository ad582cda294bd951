package newexp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// Field keys.
const (
	FieldName     = "name"
	FieldData     = "data"
	FieldModel    = "model"
	FieldSampler  = "sampler"
	FieldFanouts  = "fanouts"
	FieldBatch    = "batch_size"
	FieldHidden   = "hidden"
	FieldEpochs   = "epochs"
	FieldLayers   = "layers"
	FieldLR       = "lr"
	FieldSeed     = "seed"
	FieldDevice   = "device"
	FieldBudget   = "mem_budget"
	FieldOnOOM    = "on_oom"
	FieldCache    = "cache_bytes"
	FieldPolicy   = "cache_policy"
	FieldWorkers  = "workers"
	FieldPrefetch = "prefetch"
	FieldParts    = "parts"
	FieldRepeats  = "repeats"
	FieldAblation = "ablation"
	FieldLaunch   = "launch"
)

type kind int

const (
	text kind = iota
	choice
	toggle
	button
)

// field is one row of the form.
type field struct {
	key     string
	label   string
	kind    kind
	input   textinput.Model
	choices []string
	choice  int
	on      bool
	help    string
	err     string
	variant *runner.Builtin  // variant toggles only (nil: the ablation's)
	ext     *runner.External // command fields only: the run it was copied from
}

// Model is the new-experiment form.
type Model struct {
	c        *common.Common
	launch   launch.Launcher
	fields   []*field
	focus    int
	offset   int
	width    int
	height   int
	err      string // the launch's error, or why nothing launches
	busy     bool
	launched bool
	note     string // for the status bar at Init: whose copy the form is (Open)
	cmds     int    // command fields made so far (their keys' numbers)
	first    int    // the field Init focuses
}

// New returns the form with the default experiment's settings; it
// launches with l.
func New(c *common.Common, l launch.Launcher) *Model {
	m := &Model{c: c, launch: l}
	in := func(key, label, value, placeholder, help string) *field {
		f := &field{key: key, label: label, kind: text, input: c.NewInput(placeholder), help: help}
		f.input.SetValue(value)
		f.input.CursorEnd()
		return f
	}
	exp, _ := launch.DefaultExperiment()
	cfg := exp.Train
	models := runner.Models()
	m.fields = []*field{
		in(FieldName, "Name", "", "", "optional: how the list names it"),
		in(FieldData, "Dataset", exp.Data, "", "preset, .npz, OGB/Planetoid dir, .gsd"),
		{key: FieldModel, label: "Model", kind: choice, choices: models, choice: slices.Index(models, string(cfg.Model)), help: "←/→ change; resets sampler, fanouts"},
		{key: FieldSampler, label: "Sampler", kind: choice, choices: runner.Samplers(), help: "full batch, neighbor or GAS parts"},
		in(FieldFanouts, "Fanouts", "", "", "one per layer, -1 = all"),
		in(FieldBatch, "Batch size", "", "", "target nodes per batch"),
		in(FieldHidden, "Hidden size", "", "", "width of the hidden layers"),
		in(FieldLayers, "Layers", strconv.Itoa(cfg.Layers), "", "GNN layers (one fanout each)"),
		in(FieldEpochs, "Epochs", strconv.Itoa(cfg.Epochs), "", "passes over the training nodes"),
		in(FieldLR, "Learning rate", strconv.FormatFloat(cfg.LR, 'g', -1, 64), "", "the optimizer's step size"),
		in(FieldSeed, "Seed", strconv.FormatUint(cfg.Seed, 10), "", "samples, weights and split"),
		in(FieldDevice, "Device", runner.Devices()[0], "", strings.Join(runner.Devices(), ", ")+" (in a CUDA build) or cuda:N"),
		in(FieldBudget, "Memory budget", "", "", "512MiB, 0.1G...; empty = none"),
		{key: FieldOnOOM, label: "On OOM", kind: choice, choices: runner.OOMActions(), help: "a batch over the budget: stop, or skip it"},
		in(FieldCache, "Feature cache", "", "", "0.1G, 20%...; empty = none"),
		{key: FieldPolicy, label: "Cache policy", kind: choice, choices: runner.CachePolicies(), help: "rows: highest degree or most sampled"},
		in(FieldWorkers, "Sampler workers", strconv.Itoa(runner.DefaultSamplerWorkers), "", "for optimized and pipelined"),
		in(FieldPrefetch, "Prefetch", strconv.Itoa(runner.DefaultPrefetch), "", "batches waiting, at most"),
		in(FieldParts, "GAS parts", strconv.Itoa(runner.DefaultGASParts), "", "graph parts of the gas variant"),
		in(FieldRepeats, "Repeats", strconv.Itoa(max(exp.Repeats, 1)), "", "runs per variant; 3+ give intervals"),
	}
	m.setModelDefaults()
	for _, v := range runner.Builtins() {
		m.fields = append(m.fields, &field{key: "variant." + string(v.Name), label: string(v.Name), kind: toggle, on: v.Default, help: v.Help, variant: &v})
	}
	m.fields = append(m.fields, &field{key: FieldAblation, label: "ablation", kind: toggle, help: "instead: baseline, each optimization alone, optimized"})
	m.fields = append(m.fields, &field{key: FieldLaunch, label: "Launch", kind: button, help: "save; runs start in the background"})
	m.addCommand("", nil)
	m.validate()
	return m
}

// Init focuses the first field and, on a copy (Open), says in the
// status bar whose experiment it is.
func (m *Model) Init() tea.Cmd {
	focus := m.setFocus(m.first)
	if m.first > 0 { // a copy's commands: from their section's head down
		_, at := m.lines()
		m.offset = max(at[m.first]-2, 0)
	}
	if m.note == "" {
		return focus
	}
	st := common.StatusMsg{Text: m.note}
	return tea.Batch(focus, func() tea.Msg { return st })
}

func (m *Model) field(key string) *field {
	for _, f := range m.fields {
		if f.key == key {
			return f
		}
	}
	return nil
}

// value returns a field's value: the text, or the chosen option.
func (m *Model) value(key string) string {
	f := m.field(key)
	switch f.kind {
	case choice:
		return f.choices[f.choice]
	case text:
		return strings.TrimSpace(f.input.Value())
	}
	return ""
}

// SetValue sets a text field or picks an option of a choice (tests and
// callers that prefill the form). It revalidates.
func (m *Model) SetValue(key, value string) error {
	f := m.field(key)
	if f == nil {
		return fmt.Errorf("newexp: no field %q", key)
	}
	switch f.kind {
	case text:
		f.input.SetValue(value)
		if isCommand(f) {
			m.keepEmptyCommand()
		}
	case choice:
		i := slices.Index(f.choices, value)
		if i < 0 {
			return fmt.Errorf("newexp: %s: %q is not one of %s", f.label, value, strings.Join(f.choices, ", "))
		}
		f.choice = i
		if key == FieldModel {
			m.setModelDefaults()
		}
	case toggle:
		f.on = value == "on" || value == "true"
	}
	m.validate()
	return nil
}

// setModelDefaults fills sampler, fanouts and batch size with the chosen
// model's defaults.
func (m *Model) setModelDefaults() {
	cfg := runner.NewExperiment("", m.value(FieldModel)).Train
	s := m.field(FieldSampler)
	s.choice = max(slices.Index(s.choices, string(cfg.Sampler)), 0)
	fan := make([]string, len(cfg.Fanouts))
	for i, v := range cfg.Fanouts {
		fan[i] = strconv.Itoa(v)
	}
	m.field(FieldFanouts).input.SetValue(strings.Join(fan, ","))
	m.field(FieldBatch).input.SetValue(strconv.Itoa(cfg.BatchSize))
	m.field(FieldHidden).input.SetValue(strconv.Itoa(cfg.Hidden))
	m.field(FieldLayers).input.SetValue(strconv.Itoa(cfg.Layers))
	m.field(FieldLR).input.SetValue(strconv.FormatFloat(cfg.LR, 'g', -1, 64))
}

// Errors returns the inline errors by field key (variant toggles are
// "variant.NAME", errors of the experiment as a whole and of the launch
// are FieldLaunch's).
func (m *Model) Errors() map[string]string {
	out := map[string]string{}
	for _, f := range m.fields {
		if f.err != "" {
			out[f.key] = f.err
		}
	}
	return out
}

func (m *Model) setFocus(i int) tea.Cmd {
	n := len(m.fields)
	m.focus = (i%n + n) % n
	var cmd tea.Cmd
	for j, f := range m.fields {
		if f.kind != text {
			continue
		}
		if j == m.focus {
			cmd = f.input.Focus()
		} else {
			f.input.Blur()
		}
	}
	m.scroll()
	return cmd
}

// Focused returns the key of the focused field.
func (m *Model) Focused() string { return m.fields[m.focus].key }

// ShortHelp lists the keys the status bar shows for this screen.
func (m *Model) ShortHelp() []key.Binding {
	b := func(k, d string) key.Binding { return key.NewBinding(key.WithHelp(k, d)) }
	return []key.Binding{b("tab/↓", "next"), b("↑", "previous"), b("←/→", "change"), b("space", "toggle"), b("ctrl+s", "launch"), b("esc", "back")}
}

// Update handles messages.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.LaunchedMsg:
		if !m.busy {
			return nil
		}
		m.busy = false
		if msg.Session == "" && msg.Err != nil {
			m.err = msg.Err.Error()
			m.field(FieldLaunch).err = m.err
			return m.setFocus(len(m.fields) - 1) // the launch error, in view
		} else {
			m.launched = true
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		f := m.fields[m.focus]
		if f.kind == text {
			var cmd tea.Cmd
			f.input, cmd = f.input.Update(msg)
			m.edited(f)
			return cmd
		}
	}
	return nil
}

// edited revalidates after a text field changed; a filled last command
// field gets an empty one after it.
func (m *Model) edited(f *field) {
	if isCommand(f) {
		m.keepEmptyCommand()
	}
	m.validate()
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.busy {
		return nil
	}
	f := m.fields[m.focus]
	switch msg.String() {
	case "esc":
		return common.Back
	case "ctrl+s":
		return m.submit()
	case "tab", "down", "ctrl+n":
		return m.setFocus(m.focus + 1)
	case "shift+tab", "up", "ctrl+p":
		return m.setFocus(m.focus - 1)
	case "enter":
		switch f.kind {
		case toggle:
			f.on = !f.on
			m.validate()
			return nil
		case button:
			return m.submit()
		}
		return m.setFocus(m.focus + 1)
	}
	switch f.kind {
	case choice:
		switch msg.String() {
		case "left", "h":
			f.choice = (f.choice + len(f.choices) - 1) % len(f.choices)
		case "right", "l", "space":
			f.choice = (f.choice + 1) % len(f.choices)
		default:
			return nil
		}
		if f.key == FieldModel {
			m.setModelDefaults()
		}
		m.validate()
		return nil
	case toggle:
		if msg.String() == "space" || msg.String() == "x" {
			f.on = !f.on
			m.validate()
		}
		return nil
	case text:
		var cmd tea.Cmd
		f.input, cmd = f.input.Update(msg)
		m.edited(f)
		return cmd
	}
	return nil
}

// submit launches the experiment when the form is valid; otherwise it
// moves the focus to the first field in error.
func (m *Model) submit() tea.Cmd {
	errs := m.validate()
	m.err = ""
	if len(errs) > 0 {
		for i, f := range m.fields {
			if f.err != "" {
				return m.setFocus(i)
			}
		}
		return nil
	}
	exp, variants, _ := m.Experiment()
	spec, err := m.Spec(exp, variants)
	if err != nil {
		m.err = "spec: " + err.Error()
		m.field(FieldLaunch).err = m.err
		return nil
	}
	m.busy, m.err = true, ""
	m.field(FieldLaunch).err = ""
	return m.launch.Cmd(exp, variants, spec)
}
