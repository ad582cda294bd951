package datasets_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/datasets"
	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/data/load"
)

func TestDatasetsList(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out, _, err := clitest.Run(t, "datasets")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PRESET", "synth-tiny", "synth-products", "2,449,029", "Cache folder", "datasets stats REF"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, _, err = clitest.Run(t, "datasets", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var infos []datasets.PresetInfo
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) == 0 || infos[0].Nodes == 0 {
		t.Errorf("json listing: %v %s", err, out)
	}
}

func TestDatasetsGenerateAndStats(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	out, stderr, err := clitest.Run(t, "datasets", "generate", "synth-tiny", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "generated synth-tiny (seed 3): 10,000 nodes") || !strings.Contains(stderr, "features") {
		t.Errorf("generate output %q, progress %q", out, stderr)
	}
	cached, _ := filepath.Glob(filepath.Join(home, "cache", "synth-tiny-seed3-*.gsd"))
	if len(cached) != 1 {
		t.Fatalf("cache holds %v", cached)
	}
	out, _, err = clitest.Run(t, "datasets", "generate", "synth-tiny", "--seed", "3")
	if err != nil || !strings.Contains(out, "already cached") {
		t.Errorf("second generate: %v %q", err, out)
	}

	file := filepath.Join(t.TempDir(), "tiny.gsd")
	if _, _, err := clitest.Run(t, "datasets", "generate", "synth-tiny", "-q", "-o", file); err != nil {
		t.Fatal(err)
	}
	if _, _, err := clitest.Run(t, "datasets", "generate", "synth-tiny", "-q", "-o", file); err == nil || !strings.Contains(err.Error(), "exists: --force overwrites it") {
		t.Errorf("onto an existing file: %v", err)
	}
	if _, _, err := clitest.Run(t, "datasets", "generate", "synth-tiny", "-q", "-o", file, "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
	out, _, err = clitest.Run(t, "datasets", "stats", file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s load.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Nodes != 10000 || s.Classes != 8 || s.Split == nil {
		t.Errorf("stats json: %v %+v", err, s)
	}
	out, _, err = clitest.Run(t, "datasets", "stats", "synth-tiny", "--seed", "3", "-q")
	if err != nil || !strings.Contains(out, "nodes:          10,000") || !strings.Contains(out, "homophily:") {
		t.Errorf("stats text: %v\n%s", err, out)
	}

	// Another width is another dataset, cached apart.
	out, _, err = clitest.Run(t, "datasets", "generate", "synth-tiny:features=4", "--seed", "3", "-q")
	if err != nil || !strings.Contains(out, "generated synth-tiny:features=4 (seed 3): 10,000 nodes") || !strings.Contains(out, " 4 features") {
		t.Errorf("generate with a width: %v %q", err, out)
	}
	if narrow, _ := filepath.Glob(filepath.Join(home, "cache", "synth-tiny_features_4-seed3-*.gsd")); len(narrow) != 1 {
		t.Errorf("cache holds %v", narrow)
	}
}

func TestDatasetsErrors(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"datasets", "generate", "cora"}, `"cora" is not a preset`},
		{[]string{"datasets", "generate"}, "expects PRESET"},
		{[]string{"datasets", "generate", "synth-tiny", "-o", "x.bin"}, "must end in .gsd"},
		{[]string{"datasets", "generate", "synth-tiny:features=0"}, "features=0: want 1 to 65536"},
		{[]string{"datasets", "stats", "synth-tiny:feature=4"}, `unknown setting "feature"`},
		{[]string{"datasets", "stats"}, "expects REF"},
		{[]string{"datasets", "stats", "no-such-thing"}, "not a preset"},
		{[]string{"datasets", "stats", filepath.Join(os.TempDir(), "missing.npz")}, "missing.npz"},
	} {
		_, _, err := clitest.Run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
