package newexp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/launch"
)

type harness struct {
	t        *testing.T
	c        *common.Common
	m        *Model
	msgs     []tea.Msg
	launched []runner.Experiment
}

func newHarness(t *testing.T, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t}
	hs.c = fixture.Common(fixture.Store(t), w, h)
	hs.m = New(hs.c, fixture.Launcher(&hs.launched))
	hs.m.SetSize(w, h)
	hs.run(hs.m.Init())
	return hs
}

func (hs *harness) run(cmd tea.Cmd) { fixture.Drive(&hs.m, &hs.msgs, fixture.Step[*Model], cmd) }

func (hs *harness) press(names ...string) {
	fixture.Press(&hs.m, &hs.msgs, fixture.Step[*Model], names...)
}

// focus moves the focus to a field with tab.
func (hs *harness) focus(key string) {
	for range len(hs.m.fields) {
		if hs.m.Focused() == key {
			return
		}
		hs.press("tab")
	}
	hs.t.Fatalf("no field %s", key)
}

// clear empties the focused text field.
func (hs *harness) clear() {
	for range 40 {
		hs.press("backspace")
	}
}

func TestGoldenForm(t *testing.T) {
	hs := newHarness(t, 80, 22)
	if errs := hs.m.Errors(); len(errs) != 0 {
		t.Errorf("the default form has errors: %v", errs)
	}
	fixture.Golden(t, "form_80x22", hs.m.View())
}

func TestGoldenFormErrors(t *testing.T) {
	hs := newHarness(t, 100, 24)
	hs.focus(FieldFanouts)
	hs.clear()
	hs.press("25,x")
	hs.focus(FieldEpochs)
	hs.clear()
	hs.press("0")
	hs.focus("variant.mem-guard")
	hs.press("space")
	errs := hs.m.Errors()
	for _, k := range []string{FieldFanouts, FieldEpochs} {
		if errs[k] == "" {
			t.Errorf("no error on %s: %v", k, errs)
		}
	}
	if !strings.Contains(errs[FieldFanouts], `"x" is not a whole number`) {
		t.Errorf("fanouts error %q", errs[FieldFanouts])
	}
	fixture.Golden(t, "form_errors", hs.m.View())

	// fix fanouts and epochs: the memory guard still wants a budget
	hs.focus(FieldFanouts)
	hs.clear()
	hs.press("10,5")
	hs.focus(FieldEpochs)
	hs.clear()
	hs.press("3")
	errs = hs.m.Errors()
	if got := errs["variant.mem-guard"]; !strings.Contains(got, "needs a memory budget") {
		t.Errorf("mem-guard without a budget: %q (all: %v)", got, errs)
	}
	// ctrl+s does not launch; it moves to the field in error
	hs.press("ctrl+s")
	if len(hs.launched) != 0 {
		t.Fatal("launched a form with errors")
	}
	if hs.m.Focused() != "variant.mem-guard" {
		t.Errorf("focus on %s after a refused launch, want the mem-guard toggle", hs.m.Focused())
	}
	hs.focus(FieldBudget)
	hs.press("12 parsecs")
	if got := hs.m.Errors()[FieldBudget]; !strings.Contains(got, "unknown unit") {
		t.Errorf("budget error %q", got)
	}
	hs.clear()
	hs.press("64MiB")
	if errs := hs.m.Errors(); len(errs) != 0 {
		t.Errorf("errors left: %v", errs)
	}
}

func TestDatasetAndModelRules(t *testing.T) {
	hs := newHarness(t, 100, 24)
	hs.focus(FieldData)
	hs.clear()
	hs.press("no-such-data")
	if got := hs.m.Errors()[FieldData]; !strings.Contains(got, `unknown dataset "no-such-data"`) {
		t.Errorf("dataset error %q", got)
	}
	hs.clear()
	if got := hs.m.Errors()[FieldData]; got == "" {
		t.Error("no error for an empty dataset")
	}
	hs.press("synth-small")
	// gcn trains full-batch by default: the workers of optimized need
	// neighbor sampling, as `gnnscope run --model gcn` says
	hs.focus(FieldModel)
	hs.press("left", "left") // sage -> gcn... the list is gcn, sage, gat, appnp, gcnii
	if got := hs.m.value(FieldModel); got != "gcnii" {
		t.Fatalf("model after left left: %s", got)
	}
	hs.press("right", "right", "left")
	if got := hs.m.value(FieldModel); got != "gcn" {
		t.Fatalf("model: %s", got)
	}
	if got := hs.m.value(FieldSampler); got != "full" {
		t.Errorf("gcn's sampler %s, want its default full", got)
	}
	if got := hs.m.Errors()["variant.optimized"]; !strings.Contains(got, "need --sampler neighbor") {
		t.Errorf("optimized with full-batch gcn: %q", got)
	}
	hs.focus(FieldSampler)
	hs.press("right")
	if errs := hs.m.Errors(); len(errs) != 0 {
		t.Errorf("gcn with neighbor sampling: %v", errs)
	}
	// the gas toggle shows what runner says of gas with the chosen model
	// (whatever the engine supports today): the CLI's rule, not a copy
	hs.focus(FieldModel)
	hs.press("left") // gcnii
	hs.focus("variant.gas")
	hs.press("space")
	exp, variants, _ := hs.m.Experiment()
	want := ""
	for _, v := range variants {
		if v.Name == "gas" {
			if _, err := v.Apply(exp.Train); err != nil {
				var ke *runner.KeyError
				if !errors.As(err, &ke) {
					t.Fatalf("gas: %v", err)
				}
				want = strings.TrimPrefix(ke.Err.Error(), "invalid training config: ")
			}
		}
	}
	if got := hs.m.Errors()["variant.gas"]; got != want {
		t.Errorf("gas with gcnii: error %q, runner says %q", got, want)
	}
	// no variant at all
	hs.press("space")
	for _, v := range []string{"baseline", "optimized"} {
		hs.focus("variant." + v)
		hs.press("space")
	}
	if got := hs.m.Errors()[FieldLaunch]; !strings.Contains(got, "at least one variant") {
		t.Errorf("no variants: %q", got)
	}
}

func TestLaunch(t *testing.T) {
	hs := newHarness(t, 100, 24)
	var got []runner.Variant
	var spec []byte
	// a launcher that creates the session as runner.Launch would, without processes
	hs.m.launch = func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		hs.launched = append(hs.launched, exp)
		got = variants
		return hs.c.Store.Create(sessions.SessionMeta{Name: exp.Name})
	}
	hs.focus(FieldName)
	hs.press("my experiment")
	hs.focus(FieldEpochs)
	hs.clear()
	hs.press("7")
	hs.focus(FieldRepeats)
	hs.clear()
	hs.press("3")
	hs.focus("variant.overlap-eval")
	hs.press("space")
	hs.focus(FieldLaunch)
	hs.press("enter")
	if len(hs.launched) != 1 {
		t.Fatalf("launched %d times (errors %v)", len(hs.launched), hs.m.Errors())
	}
	exp := hs.launched[0]
	if exp.Name != "my experiment" || exp.Data != "synth-tiny" || exp.Train.Model != "sage" || exp.Train.Epochs != 7 || !slices.Equal(exp.Train.Fanouts, []int{25, 10}) || exp.Repeats != 3 {
		t.Errorf("experiment %+v", exp)
	}
	names := []string{}
	for _, v := range got {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"baseline", "optimized", "overlap-eval"}) {
		t.Errorf("variants %v", names)
	}
	var launched []common.LaunchedMsg
	for _, m := range hs.msgs {
		if l, ok := m.(common.LaunchedMsg); ok {
			launched = append(launched, l)
		}
	}
	if len(launched) != 1 || launched[0].Err != nil {
		t.Fatalf("launched messages %+v", launched)
	}
	// the spec reads back as the same experiment and variants
	spec, err := os.ReadFile(filepath.Join(launched[0].Dir, launch.SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := runner.ParseSpec("spec.toml", spec)
	if err != nil {
		t.Fatalf("spec does not parse: %v\n%s", err, spec)
	}
	if parsed.Experiment.Train.Epochs != 7 || parsed.Experiment.Data != "synth-tiny" || parsed.Experiment.Repeats != 3 || len(parsed.Variants) != 3 {
		t.Errorf("spec read back: %+v\n%s", parsed, spec)
	}
	for i, v := range parsed.Variants {
		want, _ := got[i].Apply(exp.Train)
		have, err := v.Apply(parsed.Experiment.Train)
		if err != nil || !slices.Equal(want.Fanouts, have.Fanouts) || want.SamplerWorkers != have.SamplerWorkers || want.OverlapEval != have.OverlapEval || v.Name != got[i].Name {
			t.Errorf("variant %d: %s %+v, want %s %+v (%v)", i, v.Name, have, got[i].Name, want, err)
		}
	}
}

func TestLaunchError(t *testing.T) {
	hs := newHarness(t, 100, 24)
	hs.press("ctrl+s") // the fixture's launcher refuses
	if len(hs.launched) != 1 {
		t.Fatalf("launched %d", len(hs.launched))
	}
	if got := hs.m.Errors()[FieldLaunch]; !strings.Contains(got, "launching is off in tests") {
		t.Errorf("launch error not shown inline: %q", got)
	}
	if !strings.Contains(ansi.Strip(hs.m.View()), "launching is off in tests") {
		t.Errorf("view:\n%s", hs.m.View())
	}
}

func TestEscAndSmall(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.press("esc")
	back := false
	for _, m := range hs.msgs {
		_, back = m.(common.BackMsg)
	}
	if !back {
		t.Error("esc sent no BackMsg")
	}
	for _, sz := range [][2]int{{10, 3}, {0, 0}, {30, 6}} {
		hs.m.SetSize(sz[0], sz[1])
		for range 20 {
			hs.press("tab")
			v := hs.m.View()
			if !golden.Fits(t, "form", v, sz[0], sz[1]) {
				t.FailNow()
			}
			if sz[1] > 2 && !strings.Contains(ansi.Strip(v), "▶") {
				t.Fatalf("%dx%d: focused field %s not visible:\n%s", sz[0], sz[1], hs.m.Focused(), v)
			}
		}
	}
}

// TestVariantCatalog: the form offers exactly runner's built-in variants,
// on by default as the catalog says, and each toggle yields the overrides
// it always has, with the form's sampler workers and prefetch.
func TestVariantCatalog(t *testing.T) {
	hs := newHarness(t, 100, 40)
	var toggles []string
	for _, f := range hs.m.fields {
		if f.kind == toggle && f.variant != nil {
			toggles = append(toggles, f.label)
		}
	}
	if !slices.Equal(toggles, runner.BuiltinNames()) {
		t.Errorf("toggles %v, catalog %v", toggles, runner.BuiltinNames())
	}
	for _, b := range runner.Builtins() {
		f := hs.m.field("variant." + string(b.Name))
		if f == nil || f.on != b.Default || f.help != b.Help {
			t.Errorf("%s: field %+v", b.Name, f)
		}
		if err := hs.m.SetValue("variant."+string(b.Name), "on"); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{FieldWorkers: "3", FieldPrefetch: "5", FieldBudget: "512MiB"} {
		if err := hs.m.SetValue(k, v); err != nil {
			t.Fatal(err)
		}
	}
	exp, variants, errs := hs.m.Experiment()
	if len(errs) > 0 {
		t.Errorf("errors %v", errs)
	}
	want := map[string]map[string]any{
		"baseline":     nil,
		"optimized":    {"sampler_workers": 3, "prefetch": 5, "overlap_eval": true},
		"pipelined":    {"sampler_workers": 3, "prefetch": 5},
		"overlap-eval": {"overlap_eval": true},
		"mem-guard":    {"mem_guard": "split"},
		"gas":          {"sampler": "gas", "parts": 32, "parts_per_batch": 8},
		"cache":        {"cache_bytes": "20%", "cache_policy": "degree"},
	}
	var names []string
	for _, v := range variants {
		names = append(names, v.Name)
		if !reflect.DeepEqual(v.Overrides, want[v.Name]) {
			t.Errorf("%s: overrides %v, want %v", v.Name, v.Overrides, want[v.Name])
		}
	}
	// the command line accepts the same names
	if sel, err := runner.SelectVariants(nil, names, runner.VariantParamsFor(exp.Train)); err != nil || len(sel) != len(names) {
		t.Errorf("SelectVariants(%v) = %v, %v", names, sel, err)
	}
	// a bad worker count stops only the variants that take it
	if err := hs.m.SetValue(FieldWorkers, "x"); err != nil {
		t.Fatal(err)
	}
	_, variants, errs = hs.m.Experiment()
	if errs[FieldWorkers] != "not a whole number" || len(variants) != len(names)-2 {
		t.Errorf("bad workers: errors %v, %d variants", errs, len(variants))
	}
}

// TestNewFields: hidden size, the OOM action and the GAS parts reach the
// experiment and its gas variant; a GAS parts value that is not a number
// is an error of its field.
func TestNewFields(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.focus(FieldHidden)
	hs.clear()
	hs.press("128")
	hs.focus(FieldOnOOM)
	hs.press("right")
	hs.focus(FieldParts)
	hs.clear()
	hs.press("16")
	hs.focus("variant.gas")
	hs.press("space")
	exp, variants, errs := hs.m.Experiment()
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if exp.Train.Hidden != 128 || exp.Train.OnOOM != "skip" {
		t.Errorf("hidden %d, on_oom %q", exp.Train.Hidden, exp.Train.OnOOM)
	}
	var gas *runner.Variant
	for i := range variants {
		if variants[i].Name == string(runner.GAS) {
			gas = &variants[i]
		}
	}
	if gas == nil || fmt.Sprint(gas.Overrides["parts"]) != "16" {
		t.Fatalf("gas variant %+v", gas)
	}
	hs.focus(FieldParts)
	hs.clear()
	hs.press("x")
	if got := hs.m.Errors()[FieldParts]; got != "not a whole number" {
		t.Errorf("parts x: error %q", got)
	}
}

// TestErrorsWrapped: an error too long to stand beside its field is
// wrapped below it, in full, at 80 columns.
func TestErrorsWrapped(t *testing.T) {
	hs := newHarness(t, 80, 40)
	hs.focus(FieldData)
	hs.clear()
	long := "/no/such/folder/with/a/rather/long/name/for/a/dataset/graph.npz"
	hs.press(long)
	msg := hs.m.Errors()[FieldData]
	if msg == "" {
		t.Fatal("no error for a missing dataset")
	}
	view := ansi.Strip(hs.m.View())
	for _, l := range strings.Split(view, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("line over 80 columns: %q", l)
		}
	}
	// long words break at the edge: compare without white space
	if !strings.Contains(strings.Join(strings.Fields(view), ""), strings.Join(strings.Fields(msg), "")) {
		t.Errorf("the error %q is not shown in full:\n%s", msg, view)
	}
}

// TestPrefill: the form takes an experiment's fields and built-in
// variants with their settings, and names what it cannot hold.
func TestPrefill(t *testing.T) {
	hs := newHarness(t, 120, 40)
	exp := runner.NewExperiment("synth-small", "sage")
	exp.Name, exp.Repeats = "copy", 3
	exp.Train.Epochs, exp.Train.Hidden, exp.Train.LR = 7, 32, 0.005
	exp.Train.Seed, exp.Train.Layers, exp.Train.Fanouts = 11, 3, []int{10, 5, 5}
	variants := []runner.Variant{
		{Name: "baseline"},
		{Name: "optimized", Overrides: map[string]any{"sampler_workers": 3, "prefetch": 6, "overlap_eval": true}},
		{Name: "big", Overrides: map[string]any{"hidden": 256}},
	}
	notes := hs.m.Prefill(exp, variants)
	joined := strings.Join(notes, "; ")
	if !strings.Contains(joined, "variant big is not built in") || strings.Contains(joined, "lr 0.005") || strings.Contains(joined, "seed") || strings.Contains(joined, "layers") {
		t.Errorf("notes %q: the form holds lr, seed and layers", notes)
	}
	got, vs, errs := hs.m.Experiment()
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if got.Name != "copy" || got.Data != "synth-small" || got.Repeats != 3 || got.Train.Epochs != 7 || got.Train.Hidden != 32 ||
		got.Train.LR != 0.005 || got.Train.Seed != 11 || got.Train.Layers != 3 {
		t.Errorf("experiment %+v", got)
	}
	if len(vs) != 2 || vs[1].Name != "optimized" || fmt.Sprint(vs[1].Overrides["sampler_workers"]) != "3" || fmt.Sprint(vs[1].Overrides["prefetch"]) != "6" {
		t.Errorf("variants %+v", vs)
	}
}

// TestCacheFields: the cache size and policy reach the [train] keys and
// the cache variant, a bad size is shown on its field, and the spec reads
// back with them.
func TestCacheFields(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.focus(FieldCache)
	hs.press("lots")
	if got := hs.m.Errors()[FieldCache]; !strings.Contains(got, `cache size "lots"`) {
		t.Errorf("bad size: error %q", got)
	}
	hs.clear()
	hs.press("64MiB")
	hs.focus(FieldPolicy)
	hs.press("right")
	hs.focus("variant.cache")
	hs.press("space")
	exp, variants, errs := hs.m.Experiment()
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if exp.Train.CacheBytes != "64MiB" || exp.Train.CachePolicy != "frequency" {
		t.Errorf("cache %q by %q", exp.Train.CacheBytes, exp.Train.CachePolicy)
	}
	i := slices.IndexFunc(variants, func(v runner.Variant) bool { return v.Name == string(runner.Cache) })
	if i < 0 || variants[i].Overrides["cache_bytes"] != "64MiB" || variants[i].Overrides["cache_policy"] != "frequency" {
		t.Fatalf("cache variant in %+v", variants)
	}
	spec, err := hs.m.Spec(exp, variants)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := runner.ParseSpec("spec.toml", spec)
	if err != nil || parsed.Experiment.Train.CacheBytes != "64MiB" || parsed.Experiment.Train.CachePolicy != "frequency" {
		t.Errorf("spec read back: %+v, %v\n%s", parsed, err, spec)
	}
	// a full-batch sampler cannot take the cache
	hs.focus(FieldSampler)
	hs.press("left")
	if got := hs.m.Errors()[FieldCache]; !strings.Contains(got, "needs --sampler neighbor") {
		t.Errorf("full batch with a cache: errors %v", hs.m.Errors())
	}
}

// TestPrefillCache: a copied experiment keeps its cache size and policy,
// and the cache variant its toggle.
func TestPrefillCache(t *testing.T) {
	hs := newHarness(t, 120, 40)
	exp := runner.NewExperiment("synth-small", "sage")
	exp.Train.CacheBytes, exp.Train.CachePolicy = "0.1G", "frequency"
	notes := hs.m.Prefill(exp, []runner.Variant{{Name: "baseline"}, {Name: "cache", Overrides: map[string]any{"cache_bytes": "0.1G", "cache_policy": "frequency"}}})
	if len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	got, vs, errs := hs.m.Experiment()
	if len(errs) != 0 || got.Train.CacheBytes != "0.1G" || got.Train.CachePolicy != "frequency" {
		t.Errorf("cache %q by %q, errors %v", got.Train.CacheBytes, got.Train.CachePolicy, errs)
	}
	if len(vs) != 2 || vs[1].Name != "cache" || vs[1].Overrides["cache_bytes"] != "0.1G" {
		t.Errorf("variants %+v", vs)
	}
	// a copy without a cache, after the frequency one, empties the fields
	hs.m.Prefill(runner.NewExperiment("synth-small", "sage"), []runner.Variant{{Name: "baseline"}})
	if got, _, _ := hs.m.Experiment(); got.Train.CacheBytes != "" || got.Train.CachePolicy != "" {
		t.Errorf("after a copy without a cache: %q by %q", got.Train.CacheBytes, got.Train.CachePolicy)
	}
	// the default policy with a cache is carried too
	e2 := runner.NewExperiment("synth-small", "sage")
	e2.Train.CacheBytes, e2.Train.CachePolicy = "20%", "degree"
	if notes := hs.m.Prefill(e2, []runner.Variant{{Name: "baseline"}}); len(notes) != 0 {
		t.Errorf("degree policy: notes %q", notes)
	}
}

// TestAblationToggle: the ablation toggle launches the baseline, each
// optimization of optimized alone and optimized, whatever the variant
// toggles say, and names why when optimized does not apply.
func TestAblationToggle(t *testing.T) {
	hs := newHarness(t, 100, 40)
	if err := hs.m.SetValue(FieldAblation, "on"); err != nil {
		t.Fatal(err)
	}
	_, vs, errs := hs.m.Experiment()
	if len(errs) > 0 {
		t.Fatalf("errors %v", errs)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Name)
	}
	if !slices.Equal(got, []string{"baseline", "pipelined", "overlap-eval", "cache", "optimized"}) {
		t.Errorf("ablation variants %v", got)
	}
	if err := hs.m.SetValue(FieldSampler, "full"); err != nil {
		t.Fatal(err)
	}
	if _, _, errs := hs.m.Experiment(); !strings.Contains(errs[FieldAblation], "sampler") {
		t.Errorf("ablation of full batches: errors %v", errs)
	}
}
