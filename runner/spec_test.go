package runner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestParseSpecGood(t *testing.T) {
	spec, err := LoadSpec(filepath.Join("testdata", "sage.toml"))
	if err != nil {
		t.Fatal(err)
	}
	exp := spec.Experiment
	if exp.Name != "sage on synth-small" || exp.Data != "synth-small" {
		t.Errorf("experiment %+v", exp)
	}
	c := exp.Train
	if c.Model != "sage" || c.Sampler != "neighbor" || c.Hidden != 64 || c.BatchSize != 1024 || c.Epochs != 3 ||
		!reflect.DeepEqual(c.Fanouts, []int{15, 10}) || c.LR != 0.01 || c.SamplerWorkers != 0 {
		t.Errorf("base config %+v", c)
	}
	if exp.Split != DefaultSplit() || exp.SplitSeed() != c.Seed {
		t.Errorf("split %+v", exp.Split)
	}
	var names []string
	for _, v := range spec.Variants {
		names = append(names, v.Name)
	}
	if want := []string{"baseline", "optimized", "workers-only"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("variants %v, want file order %v", names, want)
	}
	res, err := Resolve(exp, spec.Variants)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Config.SamplerWorkers != 0 || res[0].Config.OverlapEval {
		t.Errorf("baseline %+v", res[0].Config)
	}
	if o := res[1].Config; o.SamplerWorkers != 2 || o.Prefetch != 4 || !o.OverlapEval || o.Hidden != 64 {
		t.Errorf("optimized %+v", o)
	}
	if w := res[2].Config; w.SamplerWorkers != 2 || w.Prefetch != 0 || w.OverlapEval {
		t.Errorf("workers-only %+v", w)
	}

	// selection: spec variants by default, built-ins available by name
	got, err := SelectVariants(spec.Variants, nil, DefaultVariantParams())
	if err != nil || len(got) != 3 {
		t.Errorf("default selection %v, %v", got, err)
	}
	got, err = SelectVariants(spec.Variants, []string{"workers-only", "baseline"}, DefaultVariantParams())
	if err != nil || len(got) != 2 || got[0].Name != "workers-only" || got[1].Name != "baseline" {
		t.Errorf("selection %v, %v", got, err)
	}
	got, err = SelectVariants(nil, nil, DefaultVariantParams())
	if err != nil || len(got) != 2 || got[0].Name != string(Baseline) || got[1].Name != string(Optimized) {
		t.Errorf("built-in selection %v, %v", got, err)
	}
}

func TestParseSpecSplitAndDefaults(t *testing.T) {
	spec, err := ParseSpec("s.toml", []byte(`
data = "cora.npz"
[split]
mode = "per-class"
per_class = 10
seed = 7
[train]
layers = 3
epochs = 5
`))
	if err != nil {
		t.Fatal(err)
	}
	e := spec.Experiment
	if e.Split.Mode != SplitPerClass || e.Split.PerClass != 10 || e.Split.NumValid != 500 || e.SplitSeed() != 7 {
		t.Errorf("split %+v", e.Split)
	}
	// gcn defaults; fanouts follow the number of layers
	if e.Train.Model != "gcn" || e.Train.Layers != 3 || !reflect.DeepEqual(e.Train.Fanouts, []int{25, 10, 10}) {
		t.Errorf("train %+v", e.Train)
	}
	if len(spec.Variants) != 0 {
		t.Errorf("variants %v", spec.Variants)
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"malformed", "data = \"x\"\n[train\nmodel = \"sage\"\n", []string{"table name"}},
		{"unterminated string", "data = \"x\nname = 1\n", []string{"bad.toml:1:"}},
		{"unknown top-level key", "data = \"x\"\nepochs = 3\n", []string{"bad.toml:2:", `unknown key "epochs"`}},
		{"unknown split key", "data = \"x\"\n[split]\nsed = 3\n", []string{"bad.toml:3:", `"split.sed"`}},
		{"wrong type", "data = 3\n", []string{"bad.toml", "data"}},
		{"no data", "[train]\nmodel = \"sage\"\n", []string{"no dataset"}},
		{"unknown train key", "data = \"x\"\n[train]\nmodel = \"sage\"\nhiden = 64\n", []string{"bad.toml:4:", "[train]", `"hiden"`, "unknown"}},
		{"bad train value", "data = \"x\"\n[train]\nepochs = 0\n", []string{"bad.toml:3:", `"epochs"`, "at least 1"}},
		{"train type", "data = \"x\"\n[train]\nhidden = \"wide\"\n", []string{"bad.toml:3:", `"hidden"`, "string"}},
		{"unknown variant key", "data = \"x\"\n[train]\nmodel = \"sage\"\n[variants.fast]\nsampler_worker = 2\n",
			[]string{"bad.toml:5:", `variant "fast"`, `"sampler_worker"`}},
		{"bad variant value", "data = \"x\"\n[train]\nmodel = \"sage\"\n[variants.fast]\nprefetch = 1\nsampler_workers = -1\n",
			[]string{"bad.toml:6:", `variant "fast"`, `"sampler_workers"`, "non-negative"}},
		{"variant needs neighbor sampling", "data = \"x\"\n[train]\nmodel = \"gcn\"\n[variants.optimized]\nsampler_workers = 2\n",
			[]string{`variant "optimized"`, `"sampler_workers"`, "neighbor"}},
		{"negative split seed", "data = \"x\"\n[split]\nseed = -1\n", []string{"bad.toml:3:", "non-negative"}},
		{"split type", "data = \"x\"\n[split]\nper_class = 1.5\n", []string{"bad.toml:3:", "split.per_class"}},
		{"variants not a table", "data = \"x\"\nvariants = 3\n", []string{"bad.toml:2:", "table"}},
		{"variant not a table", "data = \"x\"\n[variants]\nfast = 3\n", []string{"bad.toml:3:", "variants.fast", "table"}},
		{"variant value is a table", "data = \"x\"\n[train]\nmodel = \"sage\"\n[variants.a]\nprefetch = {c = 1}\n",
			[]string{"bad.toml:5:", `variant "a": key "prefetch"`, "an object"}},
		{"bad variant name", "data = \"x\"\n[variants.\"a b\"]\n", []string{"bad.toml:2:", `variant name "a b"`}},
		{"ablation with variants", "data = \"x\"\nablation = true\n[variants.fast]\nsampler_workers = 2\n", []string{"bad.toml:2:", "ablation", "[variants]"}},
		{"ablation type", "data = \"x\"\nablation = 1\n", []string{"bad.toml:2:", "ablation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec("bad.toml", []byte(tc.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.HasPrefix(tc.want[0], "bad.toml:") || tc.name == "malformed" {
				if !regexp.MustCompile(`^bad\.toml:\d+: `).MatchString(err.Error()) {
					t.Errorf("error %q does not start with file:line", err)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestSelectVariantsUnknown(t *testing.T) {
	spec, err := LoadSpec(filepath.Join("testdata", "sage.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = SelectVariants(spec.Variants, []string{"baseline", "turbo"}, DefaultVariantParams())
	if err == nil || !strings.Contains(err.Error(), `unknown variant "turbo"`) || !strings.Contains(err.Error(), "workers-only") {
		t.Errorf("error %v", err)
	}
	if _, err := LoadSpec(filepath.Join(t.TempDir(), "missing.toml")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestParseSpecDecodeErrorsWrap(t *testing.T) {
	_, err := ParseSpec("bad.toml", []byte("data = \n"))
	var pe toml.ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "bad.toml:1: ") {
		t.Errorf("syntax error %q does not wrap toml.ParseError or name the line", err)
	}
}

// TestParseSpecRepeats: a spec's top-level repeats sets the experiment's
// (which Launch uses when no --repeats is given); out of range it is an
// error naming the line.
func TestParseSpecRepeats(t *testing.T) {
	sp, err := ParseSpec("r.toml", []byte("data = \"synth-tiny\"\nrepeats = 3\n[train]\nmodel = \"sage\"\n"))
	if err != nil || sp.Experiment.Repeats != 3 {
		t.Fatalf("repeats = 3: %+v, %v", sp, err)
	}
	for _, bad := range []string{"0", "-2", "5000"} {
		_, err := ParseSpec("r.toml", []byte("data = \"synth-tiny\"\nrepeats = "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "r.toml:2: repeats must be between 1 and 4096") {
			t.Errorf("repeats = %s: %v", bad, err)
		}
	}
	if err := (Experiment{Data: "synth-tiny", Split: DefaultSplit(), Train: NewExperiment("synth-tiny", "sage").Train, Repeats: -1}).Validate(); err == nil {
		t.Error("an experiment of -1 repeats validates")
	}
}

// TestParseSpecCache: cache_bytes and cache_policy are accepted in [train]
// and in variants, and bad values are refused with the key and line.
func TestParseSpecCache(t *testing.T) {
	spec, err := ParseSpec("c.toml", []byte(`
data = "synth-tiny"
[train]
model = "sage"
cache_bytes = "0.1G"
[variants.baseline]
[variants.freq]
cache_bytes = "20%"
cache_policy = "frequency"
`))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Experiment.Train.CacheBytes != "0.1G" {
		t.Errorf("base cache %q", spec.Experiment.Train.CacheBytes)
	}
	res, err := Resolve(spec.Experiment, spec.Variants)
	if err != nil || res[1].Config.CacheBytes != "20%" || res[1].Config.CachePolicy != "frequency" {
		t.Errorf("freq: %+v, %v", res, err)
	}
	bad := []struct{ src, want string }{
		{"[train]\nmodel = \"sage\"\ncache_bytes = \"lots\"\n", `c.toml:4: [train]: key "cache_bytes": invalid training config: cache size "lots"`},
		{"[train]\nmodel = \"sage\"\ncache_bytes = \"120%\"\n", `cache size "120%": want a percentage from 0% to 100%`},
		{"[train]\nmodel = \"sage\"\n[variants.c]\ncache_policy = \"lru\"\n", `c.toml:5: variant "c": key "cache_policy": invalid training config: cache policy "lru": want degree or frequency`},
		{"[train]\nmodel = \"gcn\"\n[variants.c]\ncache_bytes = \"1MiB\"\n", `c.toml:5: variant "c": key "cache_bytes": invalid training config: the feature cache serves mini-batches' input gathers: it needs --sampler neighbor or gas`},
		{"[train]\nmodel = \"sage\"\ncache_bytes = 5\n", `c.toml:4: [train]: key "cache_bytes": a number is not a valid string`},
	}
	for _, b := range bad {
		_, err := ParseSpec("c.toml", []byte("data = \"synth-tiny\"\n"+b.src))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: %v, want %q", b.src, err, b.want)
		}
	}
}

func TestParseSpecAblation(t *testing.T) {
	spec, err := ParseSpec("a.toml", []byte("data = \"synth-tiny\"\nablation = true\nrepeats = 3\n[train]\nmodel = \"sage\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Ablation || len(spec.Variants) != 0 || spec.Experiment.Repeats != 3 {
		t.Errorf("spec %+v", spec)
	}
}
