package gpucheck

import (
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdGPUCheckFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdGPUCheck, "--device", "cuda:1", "--bench", "--bench-time", "2s", "--bench-scale", "0.05",
		"--memory", "--memory-mib", "512", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Device != "cuda:1" || !opts.Bench || opts.BenchTime != 2*time.Second || opts.BenchScale != 0.05 || !opts.Memory || opts.MemoryMiB != 512 || !opts.JSON {
		t.Errorf("options %+v", opts)
	}
	opts, err = flagtest.Parse(t, NewCmdGPUCheck)
	if err != nil || opts.Device != "cuda" || opts.Bench || opts.BenchTime != time.Second || opts.BenchScale != 1 || opts.MemoryMiB != 2048 {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdGPUCheck, "--memory-mib", "lots"); err == nil || !strings.Contains(err.Error(), `invalid argument "lots"`) {
		t.Errorf("--memory-mib lots: %v", err)
	}
}
