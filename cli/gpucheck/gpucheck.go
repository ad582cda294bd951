package gpucheck

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/device/devcheck"
	"github.com/gnnscope/gnnscope/gnn/device/nvml"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// Report is what gpucheck prints with --json.
type Report struct {
	Device  string                 `json:"device"`
	Host    profile.Host           `json:"host"`
	NVML    string                 `json:"nvml"` // "ok" or why not
	Checks  []CheckRun             `json:"checks"`
	Bench   []devcheck.BenchResult `json:"bench,omitempty"`
	Memory  *devcheck.MemoryReport `json:"memory,omitempty"`
	Failed  int                    `json:"failed"`
	Elapsed float64                `json:"elapsed_s"`
}

// CheckRun is devcheck.Compare's results with one transfer mode.
type CheckRun struct {
	AsyncTransfer bool              `json:"async_transfer"`
	Results       []devcheck.Result `json:"results"`
}

// GPUCheckOptions are the inputs of `gnnscope gpucheck`.
type GPUCheckOptions struct {
	IO *iostreams.IOStreams

	Device     string
	Bench      bool
	BenchTime  time.Duration
	BenchScale float64
	Memory     bool
	MemoryMiB  int64
	Gemm       device.Gemm
	JSON       bool
}

// NewCmdGPUCheck returns `gnnscope gpucheck`. With runF, the command calls
// it with the parsed options instead of checking.
func NewCmdGPUCheck(f *cmdutil.Factory, runF func(*GPUCheckOptions) error) *cobra.Command {
	opts := &GPUCheckOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "gpucheck",
		Short: "Check the CUDA backend against the CPU backend, kernel by kernel, and measure it",
		Long: `Run every operation of the device interface on a GPU and on the CPU backend
with the same random inputs and report the largest relative error of each
(at most 1e-4 passes; SumRows, Relu, dropout masks, gathers, scatter-add and
copies must be bit-identical), once with synchronous and once with
asynchronous transfers. --bench then times the main kernels at the shapes of
GraphSAGE on synth-products, and --memory compares the allocator's exact
peak with the memory NVML attributes to this process.

It needs a binary built with the cuda tag (go build -tags cuda .);
--device cpu checks the CPU backend against itself instead, anywhere.
The exit status is non-zero when a check fails.`,
		Example: `  gnnscope gpucheck
  gnnscope gpucheck --device cuda:1 --bench --memory --json > gpucheck.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return gpucheckRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Device, "device", string(device.KindCUDA), "device to check: cuda, cuda:N, or cpu (the CPU backend against itself)")
	fl.BoolVar(&opts.Bench, "bench", false, "also time the main kernels")
	fl.DurationVar(&opts.BenchTime, "bench-time", time.Second, "with --bench: time each kernel at least this long")
	fl.Float64Var(&opts.BenchScale, "bench-scale", 1, "with --bench: scale every benchmark size (e.g. 0.05 on a CPU)")
	fl.BoolVar(&opts.Memory, "memory", false, "also compare the allocator's peak with NVML's figure for this process")
	fl.Int64Var(&opts.MemoryMiB, "memory-mib", 2048, "with --memory: MiB the allocation pattern reaches")
	fl.StringVar((*string)(&opts.Gemm), "gemm", string(device.GemmAuto), "cuda: matrix product to check and time: auto (cuBLAS where found), cublas or own")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object")
	return cmd
}

func gpucheckRun(opts *GPUCheckOptions) error {
	rep, err := check(opts.IO.ErrOut, opts)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := opts.IO.WriteJSON(rep); err != nil {
			return err
		}
	} else {
		printReport(opts.IO.Out, rep)
	}
	if rep.Failed > 0 {
		return fmt.Errorf("gpucheck: %d checks failed", rep.Failed)
	}
	return nil
}

// check runs the checks the options ask for, with notes on log.
func check(log io.Writer, opts *GPUCheckOptions) (*Report, error) {
	name := opts.Device
	t0 := time.Now()
	kind, _, err := device.ParseName(name)
	if err != nil {
		return nil, err
	}
	rep := &Report{Device: name, Host: profile.LocalHost(), NVML: "ok"}
	lib, nerr := nvml.Open()
	if nerr != nil {
		rep.NVML = nerr.Error()
	} else {
		defer lib.Close()
	}
	ref := cpu.New(0, 0)
	var last device.Device
	var closeLast func() error
	defer func() {
		if closeLast != nil {
			closeLast()
		}
	}()
	for _, async := range []bool{false, true} {
		if kind == device.KindCPU && async {
			break // no transfer modes on the CPU
		}
		if closeLast != nil {
			closeLast()
			closeLast = nil
		}
		dev, closeDev, err := backend.Open(name, backend.Options{AsyncTransfer: async, Gemm: opts.Gemm})
		if err != nil {
			return nil, err
		}
		last, closeLast = dev, closeDev
		if kind == device.KindCPU {
			ref = cpu.New(1, 0)
		}
		backend.Describe(dev, &rep.Host)
		fmt.Fprintf(log, "checking %s (async transfer %v) against the CPU backend\n", dev.Name(), async)
		res, err := devcheck.Compare(dev, ref, 1)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			if !r.OK {
				rep.Failed++
			}
		}
		rep.Checks = append(rep.Checks, CheckRun{AsyncTransfer: async, Results: res})
	}
	if opts.Bench {
		fmt.Fprintf(log, "timing %s\n", last.Name())
		if rep.Bench, err = devcheck.Bench(last, opts.BenchScale, opts.BenchTime); err != nil {
			return nil, err
		}
	}
	if opts.Memory {
		var process func() (int64, error)
		if d, ok := device.Unwrap(last).(device.Describer); ok && lib != nil && d.Info().UUID != "" {
			if g, err := lib.DeviceByUUID(d.Info().UUID); err == nil {
				process = func() (int64, error) {
					s, err := g.Sample()
					return s.Process, err
				}
			}
		}
		fmt.Fprintf(log, "memory pattern on %s\n", last.Name())
		m, err := devcheck.Memory(last, opts.MemoryMiB<<20, process)
		if err != nil {
			return nil, err
		}
		rep.Memory = &m
	}
	rep.Elapsed = time.Since(t0).Seconds()
	return rep, nil
}

func printReport(w io.Writer, rep *Report) {
	h := rep.Host
	fmt.Fprintf(w, "device %s", rep.Device)
	if h.GPU != "" {
		fmt.Fprintf(w, ": %s, %s, driver %s", h.GPU, units.Bytes(h.GPUMem), h.Driver)
	}
	fmt.Fprintf(w, "\nNVML: %s\n", rep.NVML)
	for _, run := range rep.Checks {
		fmt.Fprintf(w, "\nasync transfer %v:\n%-18s %-34s %12s  %s\n", run.AsyncTransfer, "op", "shape", "max rel err", "")
		for _, r := range run.Results {
			status := "ok"
			if !r.OK {
				status = "FAIL"
			}
			if r.Exact {
				status += fmt.Sprintf(" (exact: %d differ)", r.Mismatches)
			}
			fmt.Fprintf(w, "%-18s %-34s %12.3g  %s\n", r.Op, r.Shape, r.MaxRelErr, status)
		}
	}
	if len(rep.Bench) > 0 {
		fmt.Fprintf(w, "\n%-14s %-40s %10s %12s\n", "kernel", "shape", "ms/call", "rate")
		for _, b := range rep.Bench {
			fmt.Fprintf(w, "%-14s %-40s %10.3f %9.1f %s\n", b.Op, b.Shape, b.Seconds*1e3, b.Rate, b.Unit)
		}
	}
	if m := rep.Memory; m != nil {
		fmt.Fprintf(w, "\nmemory (%s): allocator peak %s", m.Pattern, units.Bytes(m.AllocatorPeak))
		if m.PoolReserved >= 0 {
			fmt.Fprintf(w, ", pool reserved %s", units.Bytes(m.PoolReserved))
		}
		if m.ProcessBefore >= 0 && m.ProcessAtPeak >= 0 {
			fmt.Fprintf(w, "; NVML process %s before, %s at the peak (+%s)", units.Bytes(m.ProcessBefore), units.Bytes(m.ProcessAtPeak), units.Bytes(m.ProcessAtPeak-m.ProcessBefore))
		} else {
			fmt.Fprint(w, "; NVML process memory not available")
		}
		fmt.Fprintln(w)
		if b := m.Books; b != nil {
			fmt.Fprintf(w, "books at the peak: reserved %s = allocated %s (scratch %s, block cache %s) + cached %s + pending %s; pinned host %s\n",
				units.Bytes(b.Reserved), units.Bytes(b.Allocated), units.Bytes(b.Scratch), units.Bytes(b.BlockCache),
				units.Bytes(b.Cached), units.Bytes(b.Pending), units.Bytes(b.PinnedHost))
		}
		if m.OutsideAllocator >= 0 {
			fmt.Fprintf(w, "outside the allocator (context, kernels, libraries): %s\n", units.Bytes(m.OutsideAllocator))
		}
	}
	fmt.Fprintf(w, "\n%d checks failed; %.1fs\n", rep.Failed, rep.Elapsed)
}
