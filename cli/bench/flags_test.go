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
	if len(p.shapes) != 8 || p.shapes[1] != (gemmShape{ta: true, m: 256, k: 100_000, n: 256}) ||
		p.shapes[2] != (gemmShape{tb: true, m: 100_000, k: 256, n: 256}) || p.shapes[7] != (gemmShape{m: 1024, k: 100, n: 256}) {
		t.Errorf("default gemm shapes %+v", p.shapes)
	}
	opts, err = flagtest.Parse(t, NewCmdBench)
	if err != nil || opts.Only != "sample,gather,peak,gemm" || opts.Data != "synth-products" || opts.Fanout != "15,10,5" || opts.Threads != "1,2" ||
		opts.Batch != 1024 || opts.MinTime != 3*time.Second {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "sample,disk"}, `--only: "disk" is not one of sample, gather, peak, gemm`},
		{[]string{"--threads", "0"}, "--threads: 0 is not a positive thread count"},
		{[]string{"--threads", ""}, "--threads: empty list"},
		{[]string{"--fanout", "a"}, `--fanout: "a" is not an integer`},
		{[]string{"--min-time", "0s"}, "--min-time must be positive"},
		{[]string{"--gemm-shapes", "10x20"}, `--gemm-shapes: "10x20" is not MxKxN`},
		{[]string{"--gemm-shapes", "10x20x30:tC"}, `--gemm-shapes: "10x20x30:tC": the suffix must be :tA or :tB`},
		{[]string{"--gemm-shapes", "10x0x30"}, `--gemm-shapes: "10x0x30": "0" is not a dimension`},
		{[]string{"--gemm-shapes", "16000000x16000000x1"}, "operands over 8 GiB"},
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
