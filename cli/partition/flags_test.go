package partition

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
	"github.com/gnnscope/gnnscope/gnn/partition"
)

func TestNewCmdPartitionFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdPartition, "--data", "synth-small", "-k", "64", "--seed", "2", "--data-seed", "5", "--imbalance", "1.1",
		"--balance", "edges", "--json", "-o", "p.part", "--write-metis", "g.graph", "--no-cache", "--cache-dir", "/c", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Data != "synth-small" || opts.Parts != 64 || opts.Seed != 2 || opts.DataSeed != 5 || opts.Imbalance != 1.1 || opts.Balance != "edges" ||
		!opts.JSON || opts.Output != "p.part" || opts.METIS != "g.graph" || !opts.NoCache || opts.CacheDir != "/c" || !opts.Quiet {
		t.Errorf("options %+v", opts)
	}
	if err := opts.check(); err != nil {
		t.Error(err)
	}
	opts, err = flagtest.Parse(t, NewCmdPartition)
	if err != nil || opts.Balance != "nodes" || opts.Imbalance != partition.DefaultImbalance || opts.Parts != 0 {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--parts", "4"}, "--data is required"},
		{[]string{"--data", "synth-tiny"}, "--parts: 0; need at least 1"},
		{[]string{"--data", "synth-tiny", "-k", "4", "--balance", "weight"}, `--balance: "weight"; want nodes or edges`},
		{[]string{"--data", "synth-tiny", "-k", "4", "--imbalance", "0.9"}, "--imbalance: 0.9; need a ratio >= 1"},
	} {
		opts, err := flagtest.Parse(t, NewCmdPartition, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := opts.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := flagtest.Parse(t, NewCmdPartition, "--parts", "many"); err == nil || !strings.Contains(err.Error(), `invalid argument "many"`) {
		t.Errorf("--parts many: %v", err)
	}
}
