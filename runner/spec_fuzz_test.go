package runner

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// specSeeds are spec files for the fuzzers' seed corpora: valid ones of
// every form and broken ones of the kinds TestParseSpecErrors lists.
var specSeeds = []string{
	"",
	"data = \"x\"\n",
	"data = \"cora.npz\"\n[split]\nmode = \"per-class\"\nper_class = 10\nseed = 7\n[train]\nlayers = 3\nepochs = 5\n",
	"data = \"x\"\n[split]\nmode = \"frac\"\ntrain_frac = 0.5\nvalid_frac = 0.2\n",
	"[variants.mine]\ncmd = \"python3 train.py --workers 4\"\nenv = { OMP_NUM_THREADS = \"4\" }\ncwd = \"t\"\nauto = false\n",
	"data = \"x\"\n[train]\nmodel = \"sage\"\n[variants.fast]\nprefetch = 1\nsampler_workers = -1\n",
	"data = \"x\"\n[train]\nmodel = \"gat\"\nheads = 4\nhidden = 100000000\n",
	"data = \"x\"\n[variants.\"a b\"]\n",
	"data = \"x\"\n[variants.\"../../x\"]\n",
	"data = \"x\"\n[variants.r.rank1]\n",
	"data = \"x\"\n[train]\nfanouts = [-1, 99999999999]\nlr = nan\n",
	"data = \"x\"\n[train\nmodel = \"sage\"\n",
	"data = \"x\"\nvariants = 3\n",
	"data = \"x\"\n[split]\nseed = -1\n",
}

// FuzzParseSpec: any bytes give a spec or an error naming the file, and an
// accepted spec keeps every promise ParseSpec makes: a valid base config,
// valid split, valid variant names, engine variants that apply to the
// base, and a dataset whenever an engine variant needs one. Run:
// go test -run x -fuzz FuzzParseSpec -fuzztime 20s ./runner/
func FuzzParseSpec(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "sage.toml")); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	for _, s := range specSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		spec, err := ParseSpec("fuzz.toml", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		exp := spec.Experiment
		if err := exp.Train.Validate(); err != nil {
			t.Fatalf("accepted an invalid base config: %v", err)
		}
		if err := exp.Split.Validate(); err != nil {
			t.Fatalf("accepted an invalid split: %v", err)
		}
		engine := len(spec.Variants) == 0
		for _, v := range spec.Variants {
			if err := checkVariantName(v.Name); err != nil {
				t.Fatalf("accepted variant name: %v", err)
			}
			if v.External != nil {
				continue
			}
			engine = true
			if _, err := v.Apply(exp.Train); err != nil {
				t.Fatalf("variant %q does not apply: %v", v.Name, err)
			}
		}
		if engine && strings.TrimSpace(exp.Data) == "" {
			t.Fatal("accepted a spec with engine variants and no data")
		}
	})
}

// configJSON returns the JSON object of cfg, key by key.
func configJSON(t *testing.T, cfg train.Config) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzApplyOverrides: a table of overrides (TOML, as in a spec's
// [variants.NAME]) applied to the defaults of a model gives either a
// valid config that differs from the base only in the overridden keys and
// is a fixed point of applying no overrides, or a *KeyError naming some of
// the overridden keys; the base is never changed. Run:
// go test -run x -fuzz FuzzApplyOverrides -fuzztime 20s ./runner/
func FuzzApplyOverrides(f *testing.F) {
	for _, s := range []string{
		"", "sampler_workers = 2\nprefetch = 4\noverlap_eval = true\n", "hidden = 100000000\n", "layers = 5\n",
		"fanouts = [1, 2, 3]\nlayers = 3\n", "lr = -1.0\n", "lr = inf\n", "model = \"gat\"\nheads = 0\n",
		"epochs = 9223372036854775807\n", "batch_size = \"big\"\n", "prefetch = {c = 1}\n", "nope = 1\n",
		"fanouts = []\n", "dropout = 1.5\n", "device = \"cuda:99\"\n",
	} {
		for _, model := range []string{"gcn", "sage", "gat"} {
			f.Add(model, s)
		}
	}
	f.Fuzz(func(t *testing.T, model, src string) {
		var over map[string]any
		if _, err := toml.Decode(src, &over); err != nil {
			return
		}
		base := train.Defaults(nn.Kind(model))
		if base.Validate() != nil {
			return
		}
		before := configJSON(t, base)
		cfg, err := ApplyOverrides(base, over)
		if after := configJSON(t, base); !reflect.DeepEqual(before, after) {
			t.Fatalf("the base changed: %v -> %v", before, after)
		}
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) || len(ke.Keys) == 0 {
				t.Fatalf("error %v is not a KeyError with keys", err)
			}
			for _, k := range ke.Keys {
				if _, ok := over[k]; !ok {
					t.Fatalf("error names key %q, which is not overridden: %v", k, err)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		got := configJSON(t, cfg)
		for k, v := range before {
			if _, ok := over[k]; !ok && string(got[k]) != string(v) {
				t.Fatalf("key %q changed from %s to %s without an override", k, v, got[k])
			}
		}
		if again, err := ApplyOverrides(cfg, nil); err != nil || !reflect.DeepEqual(configJSON(t, again), got) {
			t.Fatalf("reapplying nothing: %v", err)
		}
		for k := range over {
			if !slices.Contains(ConfigKeys(), k) {
				t.Fatalf("accepted unknown key %q", k)
			}
		}
	})
}
