package gpucheck_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/gpucheck"
	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
)

// TestGPUCheckCmd runs gpucheck on the CPU backend (against itself) with
// every part, and checks the error of a binary without the cuda tag.
func TestGPUCheckCmd(t *testing.T) {
	out, _, err := clitest.Run(t, "gpucheck", "--device", "cpu", "--bench", "--bench-scale", "0.01", "--bench-time", "1ms",
		"--memory", "--memory-mib", "16", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep gpucheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Failed != 0 || len(rep.Checks) != 1 || len(rep.Checks[0].Results) < 40 || len(rep.Bench) != 7 || rep.Memory == nil || rep.Memory.AllocatorPeak <= 0 {
		t.Fatalf("report: %d failed, %d runs, %d bench, memory %+v", rep.Failed, len(rep.Checks), len(rep.Bench), rep.Memory)
	}
	if backend.CUDABuilt {
		return
	}
	_, _, err = clitest.Run(t, "gpucheck")
	if err == nil || !strings.Contains(err.Error(), "-tags cuda") {
		t.Fatalf("gpucheck without the cuda tag: %v", err)
	}
}
