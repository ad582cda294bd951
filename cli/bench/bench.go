package bench

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
)

// benchReport is what `gnnscope bench --json` prints.
type benchReport struct {
	CPU      string               `json:"cpu"`
	Cores    int                  `json:"cores"`
	Sampling []sample.BenchResult `json:"sampling,omitempty"`
	Gather   []cpu.GatherResult   `json:"gather,omitempty"`
	Gemm     []cpu.GemmResult     `json:"gemm,omitempty"`
	Peak     []cpu.PeakResult     `json:"peak,omitempty"`
}

// BenchOptions are the inputs of `gnnscope bench`.
type BenchOptions struct {
	IO *iostreams.IOStreams

	Only    string
	Data    string
	Fanout  string
	Threads string
	// SamplerDevice is where the sampling benchmark draws the hops: cpu
	// (the workers), or cuda / cuda:N (the GPU sampler's kernel).
	SamplerDevice string
	Batch         int
	MinTime       time.Duration
	JSON          bool

	// GemmShapes lists the gemm products, MxKxN[:tA|:tB].
	GemmShapes string
}

// NewCmdBench returns `gnnscope bench`. With runF, the command calls it
// with the parsed options instead of measuring.
func NewCmdBench(f *cmdutil.Factory, runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the engine's kernels: FMA peak, sampling, row gather, gemm",
		Long: `Measure the engine's core kernels on this machine:

  sample  neighbor-sampled edges per second (total and per core) on a graph,
          by default synth-products with fanouts 15,10,5 and batches of 1024
  gather  row-gather bandwidth from a 2.4M x 100 float32 feature matrix,
          against this machine's memcpy bandwidth measured the same way
  gemm    GFLOP/s of C = op(A)·op(B) at GNN shapes (--gemm-shapes): forward
          products X·W with 100k rows (K x N of 256x256, 602x256, 100x256,
          256x64), the backward products (weight gradient Xᵀ·dY, ":tA";
          input gradient dY·Wᵀ, ":tB") and a 1024-row mini-batch layer
  peak    the cores' FMA peak: an unrolled loop of independent fused
          multiply-adds on the gemm micro-kernel's registers (AVX2 or
          AVX-512), no loads, on each thread count; with gemm, each
          product's share of the peak at its thread count is printed

--sampler-device cpu draws on the worker goroutines; cuda or cuda:N on
the GPU sampler's kernel, the workers then mapping ids and building blocks
(a binary built with -tags cuda).

Each figure is the median over repeats lasting at least --min-time. The
machine's other load distorts wall-clock rates; the per-CPU-second rates
divide by the CPU time the process actually received.

With --json it prints one object (durations are integer nanoseconds):

  {"cpu": str, "cores": int,
   "gemm": [{"M", "K", "N": int (op(A) is MxK, op(B) KxN),
             "TransA", "TransB": bool, "Threads": int, "Kernel": str,
             "Iters": int, "PerOp": ns, "GFLOPS": float, "GFLOPSPerCore": float,
             "CPUTime": ns, "GFLOPSPerCPUSecond": float}, ...],
   "peak": [{"Threads": int, "Kernel": str, "Iters": int, "PerOp": ns,
             "GFLOPS", "GFLOPSPerThread", "GFLOPSPerCPUSecond": float,
             "CPUTime": ns, "Supported": bool}, ...],
   "gather": [{"Rows", "Cols", "N", "Threads": int, "Bytes": int,
               "HugePages": bool, "GatherGBps": float (huge pages),
               "GatherPerOp": ns, "Gather4KGBps": float (4 KiB pages),
               "GatherGBpsPerCPUSecond", "Gather4KGBpsPerCPUSecond": float,
               "MemcpyGBps", "Memcpy4KGBps", "Ratio", "Ratio4K", ...}, ...],
   "sampling": [...]}

scripts/bench-torch-kernels.py prints the same keys for PyTorch (every
product path: torch.mm, torch.addmm, torch.matmul, oneDNN's inner
product; torch.index_select), so entries match on M, K, N, TransA, TransB
and Threads (gemm) or Threads (gather); scripts/bench-vs-torch.sh compares
with the fastest path per shape, each run with its BLAS's thread variables
set and its threads checked, the two sides alternating product by product
(a virtual machine's speed drifts within minutes) and each repeat's own
ratio reported beside the ratio of the medians.

gnnscope bench cache measures the feature cache's hit rate by size.`,
		Example: `  gnnscope bench
  gnnscope bench cache --data synth-medium
  gnnscope bench --only sample --data synth-small --threads 1,2
  gnnscope bench --only sample --sampler-device cuda --threads 1,4
  gnnscope bench --only gemm,gather --json
  gnnscope bench --only peak,gemm --threads 1
  gnnscope bench --only gemm --gemm-shapes 100000x602x256,602x100000x256:tA`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return benchRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Only, "only", "sample,gather,peak,gemm", "which benchmarks to run: sample, gather, peak, gemm (comma-separated)")
	fl.StringVar(&opts.Data, "data", "synth-products", "graph for the sampling benchmark (preset, .npz, OGB or Planetoid folder, .gsd)")
	fl.StringVar(&opts.Fanout, "fanout", "15,10,5", "sampling fanouts, hop 1 first")
	fl.IntVar(&opts.Batch, "batch-size", 1024, "sampling batch size")
	fl.StringVar(&opts.SamplerDevice, "sampler-device", string(device.KindCPU), "where the sampling benchmark draws each hop: cpu, cuda or cuda:N")
	fl.StringVar(&opts.Threads, "threads", "1,2", "thread counts to measure (comma-separated)")
	fl.DurationVar(&opts.MinTime, "min-time", 3*time.Second, "minimum measuring time per figure")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object")
	fl.StringVar(&opts.GemmShapes, "gemm-shapes", defaultGemmShapes, "gemm shapes MxKxN[:tA|:tB] (comma-separated)")
	cmd.AddCommand(NewCmdCache(f, nil))
	return cmd
}

// plan is what a bench run measures, from the options.
type plan struct {
	kinds   map[string]bool
	threads []int
	fanouts []int
	shapes  []gemmShape
}

// parse checks the options and returns the plan.
func (opts *BenchOptions) parse() (plan, error) {
	p := plan{kinds: map[string]bool{}}
	for _, k := range strings.Split(opts.Only, ",") {
		k = strings.TrimSpace(k)
		if k != "sample" && k != "gather" && k != "gemm" && k != "peak" {
			return p, fmt.Errorf("--only: %q is not one of sample, gather, peak, gemm", k)
		}
		p.kinds[k] = true
	}
	var err error
	if p.threads, err = cmdutil.ParseInts(opts.Threads); err != nil {
		return p, fmt.Errorf("--threads: %w", err)
	}
	for _, t := range p.threads {
		if t < 1 {
			return p, fmt.Errorf("--threads: %d is not a positive thread count", t)
		}
	}
	if p.fanouts, err = cmdutil.ParseInts(opts.Fanout); err != nil {
		return p, fmt.Errorf("--fanout: %w", err)
	}
	if p.shapes, err = parseGemmShapes(opts.GemmShapes); err != nil {
		return p, fmt.Errorf("--gemm-shapes: %w", err)
	}
	if opts.MinTime <= 0 {
		return p, fmt.Errorf("--min-time must be positive")
	}
	return p, nil
}

func benchRun(opts *BenchOptions) error {
	p, err := opts.parse()
	if err != nil {
		return err
	}
	say := func(format string, a ...any) {
		if !opts.JSON {
			fmt.Fprintf(opts.IO.Out, format, a...)
		}
	}
	rep := benchReport{CPU: cpuModel(), Cores: runtime.NumCPU()}
	if p.kinds["sample"] {
		if err := benchSampling(opts, p, &rep, say); err != nil {
			return err
		}
	}
	if p.kinds["gather"] {
		for _, t := range p.threads {
			r := cpu.BenchGather(2_449_029, 100, 200_000, t, opts.MinTime)
			rep.Gather = append(rep.Gather, r)
			say("%s\n", r)
		}
	}
	peaks := map[int]cpu.PeakResult{}
	if p.kinds["peak"] {
		for _, t := range p.threads {
			r := cpu.BenchPeak(t, opts.MinTime)
			rep.Peak = append(rep.Peak, r)
			peaks[t] = r
			say("%s\n", r)
		}
	}
	if p.kinds["gemm"] {
		for _, t := range p.threads {
			for _, s := range p.shapes {
				r := cpu.BenchGemmOp(s.ta, s.tb, s.m, s.k, s.n, t, opts.MinTime)
				rep.Gemm = append(rep.Gemm, r)
				say("%s%s\n", r, peakShare(r, peaks[t]))
			}
		}
	}
	if opts.JSON {
		return opts.IO.WriteJSON(rep)
	}
	return nil
}

// benchSampling measures neighbor sampling on the --data graph.
func benchSampling(opts *BenchOptions, p plan, rep *benchReport, say func(string, ...any)) error {
	prog := opts.IO.NewProgress(false)
	ds, err := load.Open(opts.Data, load.Options{Progress: prog.Stage})
	if err != nil {
		return err
	}
	prog.Done()
	var train []int32
	if ds.Split != nil {
		train = ds.Split.Train
	}
	if len(train) == 0 {
		train = make([]int32, ds.NumNodes())
		for i := range train {
			train[i] = int32(i)
		}
	}
	drawer, where, done, err := benchDrawer(opts.SamplerDevice, ds.Graph)
	if err != nil {
		return err
	}
	defer done()
	for _, t := range p.threads {
		r, err := sample.BenchSamplingDrawn(ds.Graph, train, p.fanouts, opts.Batch, t, opts.MinTime, drawer, where)
		if err != nil {
			return err
		}
		rep.Sampling = append(rep.Sampling, r)
		say("%s: %s\n", ds.Name, r)
	}
	return nil
}

// benchDrawer opens the GPU sampler of --sampler-device over g (nil for
// cpu) and returns it, its description and a function that releases it.
func benchDrawer(name string, g *graph.CSR) (sample.HopDrawer, string, func(), error) {
	kind, _, err := device.ParseName(name)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--sampler-device: %w", err)
	}
	if kind == device.KindCPU {
		return nil, "", func() {}, nil
	}
	dev, closeDev, err := backend.Open(name, backend.Options{})
	if err != nil {
		return nil, "", nil, err
	}
	gs, ok := device.Unwrap(dev).(device.GraphSampler)
	if !ok {
		closeDev()
		return nil, "", nil, fmt.Errorf("--sampler-device %s: the device cannot sample", name)
	}
	d, err := gs.NeighborDrawer(g)
	if err != nil {
		closeDev()
		return nil, "", nil, err
	}
	where := fmt.Sprintf("%s, graph in %s memory", dev.Name(), d.Where())
	return d, where, func() { d.Close(); closeDev() }, nil
}

// peakShare formats a product's share of the FMA peak at its thread
// count, by wall time and by CPU time ("" without a peak).
func peakShare(g cpu.GemmResult, peak cpu.PeakResult) string {
	if peak.GFLOPS <= 0 {
		return ""
	}
	s := fmt.Sprintf(", %.0f%% of the FMA peak", 100*g.GFLOPS/peak.GFLOPS)
	if peak.GFLOPSPerCPUSecond > 0 && g.GFLOPSPerCPUSecond > 0 {
		s += fmt.Sprintf(" (per CPU-second: %.0f%%)", 100*g.GFLOPSPerCPUSecond/peak.GFLOPSPerCPUSecond)
	}
	return s
}

// cpuModel returns the processor's model name, or "unknown".
func cpuModel() string {
	if m := profile.CPUModel(); m != "" {
		return m
	}
	return "unknown"
}
