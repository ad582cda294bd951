package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestTorchProfileFlag(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--cmd", "python3 t.py", "--cmd", "b=python3 u.py", "--torch-profile", "10")
	if err != nil {
		t.Fatal(err)
	}
	_, variants, err := selectVariants(opts)
	if err != nil || len(variants) != 2 || variants[0].External.TorchProfile != 10 || variants[1].External.TorchProfile != 10 {
		t.Fatalf("--torch-profile 10: %+v, %v", variants, err)
	}
	// a spec's commands: the flag sets those with the auto-instrumentation
	spec := filepath.Join(t.TempDir(), "s.toml")
	os.WriteFile(spec, []byte("[variants.a]\ncmd = \"python3 a.py\"\n[variants.b]\ncmd = \"python3 b.py\"\nauto = false\n[variants.c]\ncmd = \"python3 c.py\"\ntorch_profile = 3\n"), 0o644)
	opts, err = flagtest.Parse(t, NewCmdRun, "--spec", spec, "--torch-profile", "5")
	if err != nil {
		t.Fatal(err)
	}
	_, variants, err = selectVariants(opts)
	if err != nil || len(variants) != 3 {
		t.Fatalf("spec: %+v, %v", variants, err)
	}
	if got := []int{variants[0].External.TorchProfile, variants[1].External.TorchProfile, variants[2].External.TorchProfile}; got[0] != 5 || got[1] != 0 || got[2] != 5 {
		t.Errorf("spec with --torch-profile 5: steps %v, want [5 0 5]", got)
	}
	opts, _ = flagtest.Parse(t, NewCmdRun, "--spec", spec)
	if _, variants, err = selectVariants(opts); err != nil || variants[2].External.TorchProfile != 3 || variants[0].External.TorchProfile != 0 {
		t.Errorf("spec alone: %+v, %v", variants, err)
	}
}

func TestTorchProfileRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--torch-profile", "5"}, "--torch-profile goes with --cmd"},
		{[]string{"--cmd", "true", "--torch-profile", "-1"}, "not between 0 (none) and 10000"},
		{[]string{"--cmd", "true", "--torch-profile", "10001"}, "not between 0 (none) and 10000"},
		{[]string{"--cmd", "true", "--torch-profile", "3", "--no-auto"}, "--torch-profile needs the auto-instrumentation"},
	} {
		opts, err := flagtest.Parse(t, NewCmdRun, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, _, err := selectVariants(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	opts, err := flagtest.Parse(t, NewCmdRun, "--attach", "x", "--torch-profile", "3")
	if err != nil {
		t.Fatal(err)
	}
	if err := runRun(opts); err == nil || !strings.Contains(err.Error(), "--torch-profile does not go with") {
		t.Errorf("--attach with --torch-profile: %v", err)
	}
}
