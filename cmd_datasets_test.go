package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data/load"
)

// runCLI runs the root command with args and returns stdout, stderr.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	f := cmdutil.New()
	ios, _, out, errb := iostreams.Test()
	f.IOStreams = ios
	root := newRootCmd(f)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func TestDatasetsList(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out, _, err := runCLI(t, "datasets")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PRESET", "synth-tiny", "synth-products", "2,449,029", "Cache folder", "datasets stats REF"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, "datasets", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var infos []presetInfo
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) == 0 || infos[0].Nodes == 0 {
		t.Errorf("json listing: %v %s", err, out)
	}
}

func TestDatasetsGenerateAndStats(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	out, stderr, err := runCLI(t, "datasets", "generate", "synth-tiny", "--seed", "3")
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
	out, _, err = runCLI(t, "datasets", "generate", "synth-tiny", "--seed", "3")
	if err != nil || !strings.Contains(out, "already cached") {
		t.Errorf("second generate: %v %q", err, out)
	}

	file := filepath.Join(t.TempDir(), "tiny.gsd")
	if _, _, err := runCLI(t, "datasets", "generate", "synth-tiny", "-q", "-o", file); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = runCLI(t, "datasets", "stats", file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s load.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Nodes != 10000 || s.Classes != 8 || s.Split == nil {
		t.Errorf("stats json: %v %+v", err, s)
	}
	out, _, err = runCLI(t, "datasets", "stats", "synth-tiny", "--seed", "3", "-q")
	if err != nil || !strings.Contains(out, "nodes:          10,000") || !strings.Contains(out, "homophily:") {
		t.Errorf("stats text: %v\n%s", err, out)
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
		{[]string{"datasets", "stats"}, "expects REF"},
		{[]string{"datasets", "stats", "no-such-thing"}, "not a preset"},
		{[]string{"datasets", "stats", filepath.Join(os.TempDir(), "missing.npz")}, "missing.npz"},
	} {
		_, _, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 61859140: "61,859,140"} {
		if got := datasetsCommas(n); got != want {
			t.Errorf("datasetsCommas(%d) = %q, want %q", n, got, want)
		}
	}
}
