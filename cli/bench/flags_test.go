package bench

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdBenchFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdBench, "--only", "gemm, gather", "--data", "synth-small", "--fanout", "10,5", "--batch-size", "256",
		"--threads", "1,4", "--min-time", "500ms", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Data != "synth-small" || opts.Batch != 256 || opts.MinTime != 500*time.Millisecond || !opts.JSON {
		t.Errorf("options %+v", opts)
	}
	p, err := opts.parse()
	if err != nil {
		t.Fatal(err)
	}
	if !p.kinds["gemm"] || !p.kinds["gather"] || p.kinds["sample"] || !slices.Equal(p.threads, []int{1, 4}) || !slices.Equal(p.fanouts, []int{10, 5}) {
		t.Errorf("plan %+v", p)
	}
	opts, err = flagtest.Parse(t, NewCmdBench)
	if err != nil || opts.Only != "sample,gather,gemm" || opts.Data != "synth-products" || opts.Fanout != "15,10,5" || opts.Threads != "1,2" ||
		opts.Batch != 1024 || opts.MinTime != 3*time.Second {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "sample,disk"}, `--only: "disk" is not one of sample, gather, gemm`},
		{[]string{"--threads", "0"}, "--threads: 0 is not a positive thread count"},
		{[]string{"--threads", ""}, "--threads: empty list"},
		{[]string{"--fanout", "a"}, `--fanout: "a" is not an integer`},
		{[]string{"--min-time", "0s"}, "--min-time must be positive"},
	} {
		opts, err := flagtest.Parse(t, NewCmdBench, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := opts.parse(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
