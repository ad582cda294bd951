package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/sample"
)

// benchReport is what `gnnscope bench --json` prints.
type benchReport struct {
	CPU      string               `json:"cpu"`
	Cores    int                  `json:"cores"`
	Sampling []sample.BenchResult `json:"sampling,omitempty"`
	Gather   []cpu.GatherResult   `json:"gather,omitempty"`
	Gemm     []cpu.GemmResult     `json:"gemm,omitempty"`
}

func newBenchCmd() *cobra.Command {
	var (
		only, dataRef, fanout, threadList string
		batch                             int
		minTime                           time.Duration
		asJSON                            bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the engine's kernels: sampling, row gather, gemm",
		Long: `Measure the engine's core kernels on this machine:

  sample  neighbor-sampled edges per second (total and per core) on a graph,
          by default synth-products with fanouts 15,10,5 and batches of 1024
  gather  row-gather bandwidth from a 2.4M x 100 float32 feature matrix,
          against this machine's memcpy bandwidth measured the same way
  gemm    GFLOP/s at GNN shapes (100k x 256 times 256 x 256, and the
          transposed products the backward pass runs)

Each figure is the median over repeats lasting at least --min-time. The
machine's other load distorts wall-clock rates; the per-CPU-second rates
divide by the CPU time the process actually received.`,
		Example: `  gnnscope bench
  gnnscope bench --only sample --data synth-small --threads 1,2
  gnnscope bench --only gemm,gather --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kinds := map[string]bool{}
			for _, k := range strings.Split(only, ",") {
				k = strings.TrimSpace(k)
				if k != "sample" && k != "gather" && k != "gemm" {
					return fmt.Errorf("--only: %q is not one of sample, gather, gemm", k)
				}
				kinds[k] = true
			}
			threads, err := parseInts(threadList)
			if err != nil {
				return fmt.Errorf("--threads: %w", err)
			}
			for _, t := range threads {
				if t < 1 {
					return fmt.Errorf("--threads: %d is not a positive thread count", t)
				}
			}
			fan, err := parseInts(fanout)
			if err != nil {
				return fmt.Errorf("--fanout: %w", err)
			}
			if minTime <= 0 {
				return fmt.Errorf("--min-time must be positive")
			}
			out := cmd.OutOrStdout()
			say := func(format string, a ...any) {
				if !asJSON {
					fmt.Fprintf(out, format, a...)
				}
			}
			prog := newProgress(cmd.ErrOrStderr(), false)
			rep := benchReport{CPU: cpuModel(), Cores: runtime.NumCPU()}
			if kinds["sample"] {
				ds, err := load.Open(dataRef, load.Options{Progress: prog.stage})
				if err != nil {
					return err
				}
				prog.done()
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
				for _, t := range threads {
					r, err := sample.BenchSampling(ds.Graph, train, fan, batch, t, minTime)
					if err != nil {
						return err
					}
					rep.Sampling = append(rep.Sampling, r)
					say("%s: %s\n", ds.Name, r)
				}
			}
			if kinds["gather"] {
				for _, t := range threads {
					r := cpu.BenchGather(2_449_029, 100, 200_000, t, minTime)
					rep.Gather = append(rep.Gather, r)
					say("%s\n", r)
				}
			}
			if kinds["gemm"] {
				shapes := []struct {
					ta, tb  bool
					m, k, n int
				}{
					{false, false, 100_000, 256, 256}, // forward: X·W
					{true, false, 256, 100_000, 256},  // weight gradient: Xᵀ·dY
					{false, true, 100_000, 256, 256},  // input gradient: dY·Wᵀ
					{false, false, 1024, 100, 256},    // first layer of a small batch
				}
				for _, t := range threads {
					for _, s := range shapes {
						r := cpu.BenchGemmOp(s.ta, s.tb, s.m, s.k, s.n, t, minTime)
						rep.Gemm = append(rep.Gemm, r)
						say("%s\n", r)
					}
				}
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&only, "only", "sample,gather,gemm", "which benchmarks to run: sample, gather, gemm (comma-separated)")
	fl.StringVar(&dataRef, "data", "synth-products", "graph for the sampling benchmark (preset, .npz, OGB or Planetoid folder, .gsd)")
	fl.StringVar(&fanout, "fanout", "15,10,5", "sampling fanouts, hop 1 first")
	fl.IntVar(&batch, "batch-size", 1024, "sampling batch size")
	fl.StringVar(&threadList, "threads", "1,2", "thread counts to measure (comma-separated)")
	fl.DurationVar(&minTime, "min-time", 3*time.Second, "minimum measuring time per figure")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
