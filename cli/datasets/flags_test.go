package datasets

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdDatasetsFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdDatasets, "--json")
	if err != nil || !opts.JSON {
		t.Errorf("datasets --json: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdDatasets, "--seed", "1"); err == nil || !strings.Contains(err.Error(), "unknown flag: --seed") {
		t.Errorf("datasets --seed: %v", err)
	}
}

func TestNewCmdStatsFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdStats, "synth-small", "--json", "--seed", "3", "--split", "sales_ranking", "--no-cache", "--cache-dir", "/c", "-q")
	if err != nil || opts.Ref != "synth-small" || !opts.JSON || opts.Seed != 3 || opts.Split != "sales_ranking" || !opts.NoCache || opts.CacheDir != "/c" || !opts.Quiet {
		t.Errorf("stats: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdStats); err == nil || !strings.Contains(err.Error(), "stats expects REF (a preset") {
		t.Errorf("stats without REF: %v", err)
	}
}

func TestNewCmdGenerateFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdGenerate, "synth-medium", "--seed", "7", "-o", "m.gsd", "--cache-dir", "/c", "--force", "-q")
	if err != nil || opts.Preset != "synth-medium" || opts.Seed != 7 || opts.Output != "m.gsd" || opts.CacheDir != "/c" || !opts.Force || !opts.Quiet {
		t.Errorf("generate: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdGenerate, "a", "b"); err == nil || !strings.Contains(err.Error(), "generate expects PRESET") {
		t.Errorf("generate a b: %v", err)
	}
	// Refused before anything is generated.
	opts, err = flagtest.Parse(t, NewCmdGenerate, "synth-tiny", "-o", "x.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := generateRun(opts); err == nil || !strings.Contains(err.Error(), "must end in .gsd") {
		t.Errorf("generate -o x.bin: %v", err)
	}
}

func TestNewCmdExportFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdExport, "cora.npz", "-o", "c.npz", "--seed", "3", "--split", "per-class", "--split-seed", "0", "--compress", "--no-cache", "-q")
	if err != nil || opts.Ref != "cora.npz" || opts.Output != "c.npz" || opts.Format != "npz" || opts.Seed != 3 || opts.Split != "per-class" ||
		!opts.SplitSet || opts.SplitSeed == nil || *opts.SplitSeed != 0 || !opts.Compress || !opts.NoCache || !opts.Quiet {
		t.Errorf("export: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdExport, "cora.npz", "-o", "c.npz")
	if err != nil || opts.SplitSet || opts.SplitSeed != nil || opts.Split != "auto" {
		t.Errorf("export defaults: %+v, %v", opts, err)
	}
	// Refused before anything is loaded.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"synth-tiny", "-o", "x.npz", "--format", "csv"}, `--format "csv": only npz is supported`},
		{[]string{"synth-tiny"}, "give the output file with -o FILE.npz"},
		{[]string{"synth-tiny", "-o", "x.txt"}, "must end in .npz"},
		{[]string{"synth-tiny", "-o", "x.npz", "--split", "halves"}, `split mode "halves"`},
	} {
		opts, err := flagtest.Parse(t, NewCmdExport, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := exportRun(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
