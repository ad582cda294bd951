package partition_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/cli/partition"
)

func TestPartitionCmd(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	dir := t.TempDir()
	part, graph := filepath.Join(dir, "tiny.part"), filepath.Join(dir, "tiny.graph")
	out, _, err := clitest.Run(t, "partition", "--data", "synth-tiny", "--parts", "8", "--json", "-q",
		"-o", part, "--write-metis", graph)
	if err != nil {
		t.Fatal(err)
	}
	var rep partition.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Nodes != 10000 || rep.Parts != 8 || rep.EdgeCut <= 0 || rep.Balance > 1.03 || rep.MinPart == 0 {
		t.Errorf("report %+v", rep)
	}
	b, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != 10000 {
		t.Errorf("assignment has %d lines", lines)
	}
	g, err := os.ReadFile(graph)
	if err != nil || !strings.HasPrefix(string(g), "10000 ") {
		t.Errorf("METIS graph: %v %.40q", err, g)
	}
	if rep.Balanced != "nodes" || rep.EdgeBalance < rep.Balance {
		t.Errorf("node-balanced report: balanced %q, edge balance %v", rep.Balanced, rep.EdgeBalance)
	}
	// Balancing edges: the parts' degree + 1 sums within the tolerance,
	// their node counts no longer.
	out, _, err = clitest.Run(t, "partition", "--data", "synth-tiny", "--parts", "8", "--balance", "edges", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	var erep partition.Report
	if err := json.Unmarshal([]byte(out), &erep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if erep.Balanced != "edges" || erep.EdgeBalance > 1.03+1e-9 || erep.EdgeBalance >= rep.EdgeBalance {
		t.Errorf("edge-balanced report %+v (node-balanced edge balance %v)", erep, rep.EdgeBalance)
	}
	out, _, err = clitest.Run(t, "partition", "--data", "synth-tiny", "--parts", "8", "-q")
	if err != nil || !strings.Contains(out, "edge cut") || !strings.Contains(out, "balance") {
		t.Errorf("text output %q, %v", out, err)
	}
	for _, args := range [][]string{
		{"partition", "--parts", "4"},
		{"partition", "--data", "synth-tiny", "--parts", "0"},
		{"partition", "--data", "synth-tiny", "--parts", "20000", "-q"},
		{"partition", "--data", "synth-tiny", "--parts", "4", "--imbalance", "0.9"},
		{"partition", "--data", "synth-tiny", "--parts", "4", "--balance", "halo"},
	} {
		if _, _, err := clitest.Run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
