package newexp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// cmdSession adds to st a session of external runs as `gnnscope run
// --cmd` records it: an experiment without the engine's settings and
// variants whose spec holds the command.
func cmdSession(t *testing.T, st *sessions.Store, id string, ext map[string]*runner.External) {
	t.Helper()
	spec, err := json.Marshal(runner.Experiment{Name: "torch", Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	meta := sessions.SessionMeta{ID: id, Name: "torch", Spec: spec}
	names := make([]string, 0, len(ext))
	for name := range ext {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw, err := json.Marshal(map[string]any{"external": ext[name], "config": map[string]any{"cmd": ext[name].Argv, "external": true}})
		if err != nil {
			t.Fatal(err)
		}
		meta.Variants = append(meta.Variants, sessions.Variant{Name: name, Spec: raw})
	}
	if _, err := st.Create(meta); err != nil {
		t.Fatal(err)
	}
}

// openCmd opens the form as a copy of a session of two commands, with a
// launcher that records the variants and creates the session as
// runner.Launch would, without processes.
func openCmd(t *testing.T, w, h int, got *[]runner.Variant, exps *[]runner.Experiment) (*Model, *[]tea.Msg) {
	t.Helper()
	st := fixture.Store(t)
	cmdSession(t, st, "20260105-010101-cccc", map[string]*runner.External{
		"base": {Cmd: "python3 train.py", Argv: []string{"python3", "train.py"}, Cwd: "/src/gnn", Env: map[string]string{"OMP_NUM_THREADS": "1"}},
		"opt":  {Cmd: "python3 train.py --workers 2", Argv: []string{"python3", "train.py", "--workers", "2"}, Cwd: "/src/gnn", NoAuto: true},
	})
	c := fixture.Common(st, w, h)
	l := func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		*exps = append(*exps, exp)
		*got = variants
		return st.Create(sessions.SessionMeta{Name: exp.Name})
	}
	m, err := Open(c, l, "20260105-010101-cccc")
	if err != nil {
		t.Fatal(err)
	}
	m.SetSize(w, h)
	msgs := &[]tea.Msg{}
	fixture.Drive(&m, msgs, fixture.Step[*Model], m.Init())
	return m, msgs
}

// TestGoldenFormCommands: e on a --cmd session opens the form with its
// commands, one field each and an empty one to add another, the first
// focused; the engine's variants are off.
func TestGoldenFormCommands(t *testing.T) {
	var got []runner.Variant
	var exps []runner.Experiment
	m, _ := openCmd(t, 80, 22, &got, &exps)
	if m.Focused() != CommandKey(0) {
		t.Errorf("focused %s, want the first command", m.Focused())
	}
	exp, vs, errs := m.Experiment()
	if len(errs) != 0 || exp.Train.Model != "" || exp.Repeats != 2 || !slices.Equal(variantNames(vs), []string{"base", "opt"}) {
		t.Errorf("copy: %+v, variants %v, errors %v", exp, variantNames(vs), errs)
	}
	fixture.Golden(t, "form_commands_80x22", m.View())
}

// TestGoldenFormCommandErrors: a command that cannot be split into words
// and a bad name are shown on their fields.
func TestGoldenFormCommandErrors(t *testing.T) {
	var got []runner.Variant
	var exps []runner.Experiment
	m, msgs := openCmd(t, 80, 22, &got, &exps)
	if err := m.SetValue(CommandKey(0), "base=python3 'train.py"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetValue(CommandKey(1), "a.rank1=python3 t.py"); err != nil {
		t.Fatal(err)
	}
	errs := m.Errors()
	if !strings.Contains(errs[CommandKey(0)], "unterminated") || !strings.Contains(errs[CommandKey(1)], "a.rank1") {
		t.Errorf("errors %v", errs)
	}
	fixture.Press(&m, msgs, fixture.Step[*Model], "ctrl+s")
	if len(exps) != 0 {
		t.Errorf("launched with errors: %v", variantNames(got))
	}
	fixture.Golden(t, "form_command_errors_80x22", m.View())
}

// TestRelaunchCommands opens a --cmd session in the form, edits its first
// command and launches: the launch carries the edited command with the
// run's folder and environment, the other run as it was, and the spec
// saved beside the session reads back to the same runs.
func TestRelaunchCommands(t *testing.T) {
	var got []runner.Variant
	var exps []runner.Experiment
	m, msgs := openCmd(t, 100, 30, &got, &exps)
	press := func(k ...string) { fixture.Press(&m, msgs, fixture.Step[*Model], k...) }
	press(" --epochs 3")
	press("ctrl+s")
	if len(exps) != 1 {
		t.Fatalf("launched %d times (errors %v)", len(exps), m.Errors())
	}
	if exps[0].Name != "torch" || exps[0].Repeats != 2 || exps[0].Data != "" || exps[0].Train.Model != "" {
		t.Errorf("experiment %+v", exps[0])
	}
	if len(got) != 2 || got[0].Name != "base" || got[1].Name != "opt" {
		t.Fatalf("variants %v", variantNames(got))
	}
	base, opt := got[0].External, got[1].External
	if base == nil || base.Cmd != "python3 train.py --epochs 3" || !slices.Equal(base.Argv, []string{"python3", "train.py", "--epochs", "3"}) ||
		base.Cwd != "/src/gnn" || base.Env["OMP_NUM_THREADS"] != "1" {
		t.Errorf("edited run %+v", base)
	}
	if opt == nil || opt.Cmd != "python3 train.py --workers 2" || !opt.NoAuto {
		t.Errorf("other run %+v", opt)
	}
	var dir string
	for _, msg := range *msgs {
		if l, ok := msg.(common.LaunchedMsg); ok && l.Err == nil {
			dir = l.Dir
		}
	}
	spec, err := os.ReadFile(filepath.Join(dir, launch.SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := runner.ParseSpec("spec.toml", spec)
	if err != nil {
		t.Fatalf("spec: %v\n%s", err, spec)
	}
	if len(parsed.Variants) != 2 || parsed.Variants[0].External.Cmd != base.Cmd || parsed.Variants[0].External.Cwd != "/src/gnn" || !parsed.Variants[1].External.NoAuto || parsed.Experiment.Repeats != 2 {
		t.Errorf("spec read back %+v\n%s", parsed.Variants, spec)
	}
}

// TestCommandFields: a blank form has one empty command field; filling
// it adds a run beside the engine's variants and another empty field,
// clearing it drops the run, and a name taken by a variant is refused.
func TestCommandFields(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.focus(FieldCommand)
	hs.press("mine=python3 t.py --lr=0.1")
	_, vs, errs := hs.m.Experiment()
	if len(errs) != 0 || !slices.Equal(variantNames(vs), []string{"baseline", "optimized", "mine"}) || vs[2].External.Cmd != "python3 t.py --lr=0.1" {
		t.Fatalf("variants %v, errors %v", variantNames(vs), errs)
	}
	if len(hs.m.commandFields()) != 2 {
		t.Errorf("%d command fields, want the filled one and an empty one", len(hs.m.commandFields()))
	}
	hs.focus(CommandKey(1))
	hs.press("baseline=python3 u.py")
	if err := hs.m.Errors()[CommandKey(1)]; !strings.Contains(err, "another run is named baseline") {
		t.Errorf("a taken name: %q", err)
	}
	hs.clear()
	hs.focus(FieldCommand)
	hs.clear()
	if _, vs, errs := hs.m.Experiment(); len(errs) != 0 || !slices.Equal(variantNames(vs), []string{"baseline", "optimized"}) {
		t.Errorf("cleared: variants %v, errors %v", variantNames(vs), errs)
	}
}

// TestPrefillMixed: a copy of a session of engine variants and a command
// toggles the built-in ones and puts the command in a field.
func TestPrefillMixed(t *testing.T) {
	hs := newHarness(t, 120, 40)
	exp := runner.NewExperiment("synth-tiny", "sage")
	variants := []runner.Variant{{Name: "baseline"}, {Name: "torch", External: &runner.External{Cmd: "python3 t.py"}}}
	if notes := hs.m.Prefill(exp, variants); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	if got := hs.m.value(CommandKey(0)); got != "torch=python3 t.py" {
		t.Errorf("command field %q", got)
	}
	if _, vs, errs := hs.m.Experiment(); len(errs) != 0 || !slices.Equal(variantNames(vs), []string{"baseline", "torch"}) {
		t.Errorf("variants %v, errors %v", variantNames(vs), errs)
	}
}
