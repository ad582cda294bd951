package newexp

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/BurntSushi/toml"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
)

// Field keys.
const (
	FieldName     = "name"
	FieldData     = "data"
	FieldModel    = "model"
	FieldSampler  = "sampler"
	FieldFanouts  = "fanouts"
	FieldBatch    = "batch_size"
	FieldEpochs   = "epochs"
	FieldBudget   = "mem_budget"
	FieldWorkers  = "workers"
	FieldPrefetch = "prefetch"
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
	variant *variantDef // toggles only
}

// variantDef is a variant the form can add: its name, what it says and
// its overrides (from the form's values).
type variantDef struct {
	name      string
	help      string
	on        bool // by default
	overrides func(f *Model) (map[string]any, error)
}

// GAS settings of the gas variant.
const (
	gasParts         = 32
	gasPartsPerBatch = 8
)

func variantDefs() []*variantDef {
	return []*variantDef{
		{name: runner.Baseline, on: true, help: "sample, gather, train in turn",
			overrides: func(*Model) (map[string]any, error) { return nil, nil }},
		{name: runner.Optimized, on: true, help: "workers, prefetch, overlapped eval",
			overrides: func(f *Model) (map[string]any, error) {
				w, p, err := f.pipeline()
				return map[string]any{"sampler_workers": w, "prefetch": p, "overlap_eval": true}, err
			}},
		{name: "pipelined", help: "sampler workers and prefetch",
			overrides: func(f *Model) (map[string]any, error) {
				w, p, err := f.pipeline()
				return map[string]any{"sampler_workers": w, "prefetch": p}, err
			}},
		{name: "overlap-eval", help: "eval during the next epoch",
			overrides: func(*Model) (map[string]any, error) { return map[string]any{"overlap_eval": true}, nil }},
		{name: "mem-guard", help: "split batches over the budget",
			overrides: func(*Model) (map[string]any, error) { return map[string]any{"mem_guard": "split"}, nil }},
		{name: "gas", help: fmt.Sprintf("GNNAutoScale, %d parts, %d a batch", gasParts, gasPartsPerBatch),
			overrides: func(*Model) (map[string]any, error) {
				return map[string]any{"sampler": "gas", "parts": gasParts, "parts_per_batch": gasPartsPerBatch}, nil
			}},
	}
}

// Model is the new-experiment form.
type Model struct {
	c        *common.Common
	fields   []*field
	focus    int
	offset   int
	width    int
	height   int
	err      string // the launch's error, or why nothing launches
	busy     bool
	launched bool
}

// New returns the form with the default experiment's settings.
func New(c *common.Common) *Model {
	m := &Model{c: c}
	in := func(key, label, value, placeholder, help string) *field {
		f := &field{key: key, label: label, kind: text, input: c.NewInput(placeholder), help: help}
		f.input.SetValue(value)
		f.input.CursorEnd()
		return f
	}
	exp, _ := common.DefaultExperiment()
	cfg := exp.Train
	models := runner.Models()
	m.fields = []*field{
		in(FieldName, "Name", "", "", "optional: how the list names it"),
		in(FieldData, "Dataset", exp.Data, "", "preset, .npz, OGB/Planetoid dir, .gsd"),
		{key: FieldModel, label: "Model", kind: choice, choices: models, choice: slices.Index(models, string(cfg.Model)), help: "←/→ change; resets sampler, fanouts"},
		{key: FieldSampler, label: "Sampler", kind: choice, choices: []string{"full", "neighbor", "gas"}, help: "full batch, neighbor or GAS parts"},
		in(FieldFanouts, "Fanouts", "", "", "one per layer, -1 = all"),
		in(FieldBatch, "Batch size", "", "", "target nodes per batch"),
		in(FieldEpochs, "Epochs", strconv.Itoa(cfg.Epochs), "", "passes over the training nodes"),
		in(FieldBudget, "Memory budget", "", "", "512MiB, 0.1G...; empty = none"),
		in(FieldWorkers, "Sampler workers", "2", "", "for optimized and pipelined"),
		in(FieldPrefetch, "Prefetch", "4", "", "batches waiting, at most"),
	}
	m.setModelDefaults()
	for _, v := range variantDefs() {
		m.fields = append(m.fields, &field{key: "variant." + v.name, label: v.name, kind: toggle, on: v.on, help: v.help, variant: v})
	}
	m.fields = append(m.fields, &field{key: FieldLaunch, label: "Launch", kind: button, help: "save; runs start in the background"})
	m.validate()
	return m
}

// Init focuses the first field.
func (m *Model) Init() tea.Cmd { return m.setFocus(0) }

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

// pipeline parses the sampler workers and prefetch fields.
func (m *Model) pipeline() (int, int, error) {
	w, err := strconv.Atoi(m.value(FieldWorkers))
	if err != nil {
		return 0, 0, errors.New("sampler workers: not a whole number")
	}
	p, err := strconv.Atoi(m.value(FieldPrefetch))
	if err != nil {
		return 0, 0, errors.New("prefetch: not a whole number")
	}
	return w, p, nil
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
	for _, k := range []string{FieldBatch, FieldEpochs} {
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
	baseOK := len(errs) == 0
	var variants []runner.Variant
	for _, f := range m.fields {
		if f.kind != toggle || !f.on {
			continue
		}
		over, err := f.variant.overrides(m)
		if err != nil {
			if strings.HasPrefix(err.Error(), "prefetch") {
				errs[FieldPrefetch] = "not a whole number"
			} else {
				errs[FieldWorkers] = "not a whole number"
			}
			continue
		}
		v := runner.Variant{Name: f.variant.name, Overrides: over}
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
	if len(variants) == 0 {
		errs[FieldLaunch] = "choose at least one variant (space toggles)"
	}
	if len(errs) == 0 {
		if _, err := runner.Resolve(exp, variants); err != nil {
			errs[FieldLaunch] = err.Error()
		}
	}
	return exp, variants, errs
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
	errs := map[string]string{}
	keys := m.trainKeys(errs)
	if len(errs) > 0 {
		return nil, errors.New("the form has errors")
	}
	var b bytes.Buffer
	b.WriteString("# written by the gnnscope workbench; rerun with: gnnscope run --spec spec.toml\n")
	top, err := toml.Marshal(struct {
		Name string `toml:"name,omitempty"`
		Data string `toml:"data"`
	}{exp.Name, exp.Data})
	if err != nil {
		return nil, err
	}
	b.Write(top)
	train, err := toml.Marshal(keys)
	if err != nil {
		return nil, err
	}
	b.WriteString("\n[train]\n")
	b.Write(train)
	for _, v := range variants {
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

// SetSize sets the area the form draws in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	for _, f := range m.fields {
		if f.kind == text {
			f.input.SetWidth(inputW(w))
		}
	}
	m.scroll()
}

// labelW is the width of the labels.
const labelW = 16

// inputW is the width of the inputs: a quarter of the width, 12 to 28.
func inputW(w int) int { return min(max(w/4, 12), 28) }

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
func (m *Model) Update(msg tea.Msg) (*Model, tea.Cmd) {
	switch msg := msg.(type) {
	case common.LaunchedMsg:
		if !m.busy {
			return m, nil
		}
		m.busy = false
		if msg.Session == "" && msg.Err != nil {
			m.err = msg.Err.Error()
			m.field(FieldLaunch).err = m.err
		} else {
			m.launched = true
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		f := m.fields[m.focus]
		if f.kind == text {
			var cmd tea.Cmd
			f.input, cmd = f.input.Update(msg)
			m.validate()
			return m, cmd
		}
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.busy {
		return nil
	}
	f := m.fields[m.focus]
	switch msg.String() {
	case "esc":
		return func() tea.Msg { return common.BackMsg{} }
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
		m.validate()
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
	return m.c.LaunchCmd(exp, variants, spec)
}

// lines renders every field; it returns the lines and the line of each
// field.
func (m *Model) lines() ([]string, []int) {
	st := m.c.Styles
	var out []string
	at := make([]int, len(m.fields))
	inW := inputW(m.width)
	sectionShown := false
	for i, f := range m.fields {
		if f.kind == toggle && !sectionShown {
			sectionShown = true
			out = append(out, "", st.Header.Render("Variants")+st.Muted.Render("  (one run each; space toggles)"))
		}
		if f.kind == button {
			out = append(out, "")
		}
		at[i] = len(out)
		cur := "  "
		if i == m.focus {
			cur = st.Selected.Render(st.Glyphs.Cursor) + " "
		}
		var widget string
		switch f.kind {
		case text:
			widget = "[" + draw.PadRight(f.input.View(), inW) + "]"
		case choice:
			l, r := "‹", "›"
			if m.c.Opts.ASCII {
				l, r = "<", ">"
			}
			widget = draw.PadRight(l+" "+f.choices[f.choice]+" "+r, inW+2)
		case toggle:
			box := "[ ]"
			if f.on {
				box = "[x]"
			}
			widget = box + " " + draw.PadRight(f.label, inW-2)
		case button:
			widget = draw.PadRight(st.Title.Render("[ Launch ]"), inW+2)
			if m.busy {
				widget = draw.PadRight(st.Muted.Render("launching..."), inW+2)
			}
		}
		label := draw.PadRight(f.label, labelW)
		if f.kind == toggle || f.kind == button {
			label = strings.Repeat(" ", labelW)
		}
		note := st.Muted.Render(m.helpText(f))
		if f.err != "" && f.kind != button {
			note = st.Error.Render(errGlyph(m.c) + " " + f.err)
		}
		out = append(out, cur+label+widget+"  "+note)
		if f.err != "" && f.kind == button {
			// the experiment's or the launch's error, in full
			wrapped := ansi.Wrap(errGlyph(m.c)+" "+f.err, max(m.width-4, 10), " ")
			for _, l := range strings.Split(wrapped, "\n") {
				out = append(out, "  "+st.Error.Render(l))
			}
		}
	}
	return out, at
}

func (m *Model) helpText(f *field) string {
	if m.c.Opts.ASCII {
		return strings.NewReplacer("←", "left", "→", "right").Replace(f.help)
	}
	return f.help
}

func errGlyph(c *common.Common) string {
	if c.Opts.ASCII {
		return "!"
	}
	return "✗"
}

// scroll keeps the focused field visible.
func (m *Model) scroll() {
	if m.height <= 0 {
		return
	}
	_, at := m.lines()
	h := max(m.height-1, 1)
	line := at[m.focus]
	if line < m.offset {
		m.offset = line
	}
	if line >= m.offset+h {
		m.offset = line - h + 1
	}
}

// View renders the form.
func (m *Model) View() string {
	st := m.c.Styles
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	lines, _ := m.lines()
	head := st.Title.Render("New experiment") + st.Muted.Render("  saved as a session, run in the background")
	h := max(m.height-1, 1)
	off := min(m.offset, max(len(lines)-h, 0))
	lines = lines[off:min(off+h, len(lines))]
	return draw.Fit(head+"\n"+strings.Join(lines, "\n"), m.width, m.height)
}
