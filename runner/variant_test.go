package runner

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

func TestConfigKeys(t *testing.T) {
	keys := ConfigKeys()
	for _, k := range []string{"model", "fanouts", "batch_size", "sampler_workers", "prefetch", "overlap_eval"} {
		if !slices.Contains(keys, k) {
			t.Errorf("ConfigKeys lacks %q: %v", k, keys)
		}
	}
}

func TestApplyOverrides(t *testing.T) {
	base := train.Defaults("sage")
	opt := DefaultVariants()[1]
	cfg, err := opt.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.OverlapEval = true // the workers and prefetch are sized at Resolve and in the worker
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("optimized:\n got %+v\nwant %+v", cfg, want)
	}
	if base.SamplerWorkers != 0 || len(base.Fanouts) != 2 {
		t.Error("base modified")
	}
	// baseline: no overrides, the base as is
	if cfg, err := DefaultVariants()[0].Apply(base); err != nil || !reflect.DeepEqual(cfg, base) {
		t.Errorf("baseline %+v, %v", cfg, err)
	}
	// TOML-typed values: int64, float64 holding an integer, []any
	cfg, err = ApplyOverrides(base, map[string]any{"hidden": int64(32), "lr": int64(1), "epochs": 4.0, "fanouts": []any{int64(5), int64(-1)}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hidden != 32 || cfg.LR != 1 || cfg.Epochs != 4 || !reflect.DeepEqual(cfg.Fanouts, []int{5, -1}) {
		t.Errorf("typed overrides %+v", cfg)
	}
}

func TestApplyOverridesErrors(t *testing.T) {
	base := train.Defaults("sage")
	for _, tc := range []struct {
		name string
		over map[string]any
		keys []string
		want string
	}{
		{"unknown", map[string]any{"prefetch": 2, "sampler_worker": 2, "zzz": 1}, []string{"sampler_worker", "zzz"}, "unknown"},
		{"type", map[string]any{"prefetch": 2, "overlap_eval": "yes"}, []string{"overlap_eval"}, "string"},
		{"fraction in int", map[string]any{"hidden": 1.5}, []string{"hidden"}, "number"},
		{"invalid value", map[string]any{"prefetch": 2, "dropout": 1.5}, []string{"dropout"}, "dropout"},
		{"one bad key", map[string]any{"layers": 3, "hidden": 8}, []string{"layers"}, "one fanout per layer"},
		{"combination", map[string]any{"sampler": "full", "sampler_workers": 2}, []string{"sampler", "sampler_workers"}, "need --sampler neighbor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Variant{Name: "v", Overrides: tc.over}.Apply(base)
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is not a KeyError", err)
			}
			if !reflect.DeepEqual(ke.Keys, tc.keys) {
				t.Errorf("keys %v, want %v", ke.Keys, tc.keys)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, `variant "v": key`) || !strings.Contains(msg, tc.want) {
				t.Errorf("message %q", msg)
			}
		})
	}
	// an invalid base is reported as the base's fault
	bad := base
	bad.Epochs = 0
	if _, err := ApplyOverrides(bad, map[string]any{"prefetch": 1}); err == nil || !strings.Contains(err.Error(), "base config") {
		t.Errorf("invalid base: %v", err)
	}
}

func TestResolve(t *testing.T) {
	exp := NewExperiment("synth-tiny", "sage")
	if _, err := Resolve(exp, []Variant{{Name: "a"}, {Name: "a"}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	_, err := Resolve(exp, []Variant{{Name: "../x"}, {Name: "ok", Overrides: map[string]any{"epochs": -1}}})
	if err == nil || !strings.Contains(err.Error(), `"../x"`) || !strings.Contains(err.Error(), `variant "ok": key "epochs"`) {
		t.Errorf("every bad variant at once: %v", err)
	}
	gcn := NewExperiment("synth-tiny", "gcn")
	if _, err := Resolve(gcn, DefaultVariants()); err == nil || !strings.Contains(err.Error(), `variant "optimized": key "sampler_workers"`) {
		t.Errorf("optimized on full-batch gcn: %v", err)
	}
}

func TestConfigFromKeys(t *testing.T) {
	cfg, err := ConfigFromKeys(map[string]any{"model": "sage", "layers": int64(1)}, "gcn")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sampler != "neighbor" || !reflect.DeepEqual(cfg.Fanouts, []int{25}) {
		t.Errorf("%+v", cfg)
	}
	if _, err := ConfigFromKeys(map[string]any{"model": "mlp"}, "gcn"); err == nil || !strings.Contains(err.Error(), `"model"`) {
		t.Errorf("bad model: %v", err)
	}
}

// A model key given as the config field's type (nn.Kind, as the command
// line passes it) picks that model's defaults, as the same name in a spec
// does.
func TestConfigFromKeysTypedModel(t *testing.T) {
	fromSpec, err := ConfigFromKeys(map[string]any{"model": "gcnii"}, "sage")
	if err != nil {
		t.Fatal(err)
	}
	typed, err := ConfigFromKeys(map[string]any{"model": nn.KindGCNII}, "sage")
	if err != nil {
		t.Fatal(err)
	}
	if typed.Model != nn.KindGCNII || typed.Layers != fromSpec.Layers || typed.Epochs != fromSpec.Epochs {
		t.Errorf("typed model key: model %s, %d layers, %d epochs; spec gives %s, %d, %d",
			typed.Model, typed.Layers, typed.Epochs, fromSpec.Model, fromSpec.Layers, fromSpec.Epochs)
	}
}

// A variant named like a rank journal ("x.rank1") would be merged into run
// "x" by every reader; Resolve and the spec refuse it, naming the run.
func TestRankJournalNamesRefused(t *testing.T) {
	exp := Experiment{Data: "synth-tiny", Split: DefaultSplit(), Train: train.Defaults(nn.KindSAGE)}
	_, err := Resolve(exp, []Variant{{Name: "baseline"}, {Name: "opt.rank1"}})
	if err == nil || !strings.Contains(err.Error(), `"opt.rank1"`) || !strings.Contains(err.Error(), `run "opt"`) {
		t.Errorf("Resolve with a rank journal's name: %v", err)
	}
	if _, err := Resolve(exp, []Variant{{Name: "opt.rank0"}, {Name: "opt.ranks"}}); err != nil {
		t.Errorf("rank0 and .ranks are not rank journals: %v", err)
	}
	if err := checkRunName("ext.rank2"); err == nil || !strings.Contains(err.Error(), "rank 2") {
		t.Errorf("checkRunName(ext.rank2): %v", err)
	}
}

// Hostile sizes are refused when the variants resolve, before a session
// exists: a model that cannot fit whatever the dataset (the estimate is
// given), more layers than MaxLayers (once a fatal out-of-memory error
// while filling the fanouts), and more variants than MaxVariants.
func TestResolveRefusesHostileSizes(t *testing.T) {
	gat := NewExperiment("synth-tiny", "gat")
	_, err := Resolve(gat, []Variant{{Name: "wide", Overrides: map[string]any{"heads": int64(100_000_000), "mem_budget": "1GiB"}}})
	if err == nil || !strings.Contains(err.Error(), `variant "wide": model: gat`) || !strings.Contains(err.Error(), "more than the memory budget") {
		t.Errorf("huge heads: %v", err)
	}
	if _, err := ConfigFromKeys(map[string]any{"model": "gcn", "layers": int64(1_000_000_000)}, "gcn"); err == nil || !strings.Contains(err.Error(), "layers must be between 1 and") {
		t.Errorf("huge layers: %v", err)
	}
	many := make([]Variant, MaxVariants+1)
	for i := range many {
		many[i] = Variant{Name: "v" + strings.Repeat("x", i%5)}
	}
	if _, err := Resolve(NewExperiment("synth-tiny", "sage"), many); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("too many variants: %v", err)
	}
}

// TestMaxRuns: a launch.json of more than MaxRuns runs is refused (100,000
// runs took 18 s to list), and so is a launch that would make as many.
func TestMaxRuns(t *testing.T) {
	st := launchState{Runs: make([]string, MaxRuns+1)}
	for i := range st.Runs {
		st.Runs[i] = "r" + strconv.Itoa(i)
	}
	if err := st.checkNames(); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("too many runs in launch.json: %v", err)
	}
	resolved := make([]Resolved, 100)
	if _, _, err := repeatRuns(resolved, MaxRuns/50); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("too many repeats: %v", err)
	}
}
