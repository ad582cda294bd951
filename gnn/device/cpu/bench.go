package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// GemmResult is one measurement of Gemm throughput.
type GemmResult struct {
	M, K, N        int  // op(A) is M×K, op(B) K×N
	TransA, TransB bool // operand layouts
	Threads        int
	Kernel         string        // micro-kernel used
	Iters          int           // products timed
	PerOp          time.Duration // median time of one product
	GFLOPS         float64       // 2·M·N·K / PerOp
	GFLOPSPerCore  float64       // GFLOPS / Threads
	// CPUTime is the median CPU time of one product (all threads), and
	// GFLOPSPerCPUSecond the work done per second of CPU actually received:
	// on a shared machine, where threads wait for a core, it estimates the
	// per-core rate of an unloaded one (0 where CPU time is unavailable).
	CPUTime            time.Duration
	GFLOPSPerCPUSecond float64
}

// String formats the result on one line.
func (r GemmResult) String() string {
	ta, tb := "", ""
	if r.TransA {
		ta = "ᵀ"
	}
	if r.TransB {
		tb = "ᵀ"
	}
	return fmt.Sprintf("gemm A%s·B%s %dx%dx%d threads=%d kernel=%s: %v/op, %.1f GFLOP/s (%.1f per core, %.1f per CPU-second)",
		ta, tb, r.M, r.K, r.N, r.Threads, r.Kernel, r.PerOp, r.GFLOPS, r.GFLOPSPerCore, r.GFLOPSPerCPUSecond)
}

// BenchGemm measures C = A·B with A m×k and B k×n (no transposes) on a
// device with the given number of threads, repeating for at least minTime.
func BenchGemm(m, k, n, threads int, minTime time.Duration) GemmResult {
	return BenchGemmOp(false, false, m, k, n, threads, minTime)
}

// BenchGemmOp measures C = op(A)·op(B) where op(A) is m×k and op(B) k×n,
// as the backward pass uses them: transA for weight gradients (Xᵀ·dY),
// transB for input gradients (dY·Wᵀ).
func BenchGemmOp(transA, transB bool, m, k, n, threads int, minTime time.Duration) GemmResult {
	d := New(threads, 0)
	defer d.Close()
	d.SetPoolLimit(0)
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	r := rng.New(1)
	a := benchTensor(d, r, ar, ac)
	b := benchTensor(d, r, br, bc)
	c := benchTensor(d, r, m, n)
	defer d.Free(a)
	defer d.Free(b)
	defer d.Free(c)
	d.Gemm(transA, transB, 1, a, b, 0, c) // warm up
	tm := timeMedian(minTime, func() { d.Gemm(transA, transB, 1, a, b, 0, c) })
	flops := 2 * float64(m) * float64(n) * float64(k)
	gf := flops / tm.wall.Seconds() / 1e9
	res := GemmResult{M: m, K: k, N: n, TransA: transA, TransB: transB, Threads: d.threads,
		Kernel: GemmKernel(), Iters: tm.runs, PerOp: tm.wall, GFLOPS: gf, GFLOPSPerCore: gf / float64(d.threads)}
	if tm.cpu > 0 {
		res.CPUTime = tm.cpu
		res.GFLOPSPerCPUSecond = flops / tm.cpu.Seconds() / 1e9
	}
	return res
}

// GatherResult compares row-gather bandwidth with memcpy bandwidth.
type GatherResult struct {
	Rows, Cols int // host feature matrix
	N          int // rows gathered per operation
	Threads    int
	Bytes      int64 // bytes gathered (and copied) per operation

	// Feature matrix advised to use transparent huge pages (see
	// AdviseHugePages; HugePages says whether the advice was taken).
	HugePages   bool
	GatherGBps  float64       // GatherHost with uniformly random indices
	MemcpyGBps  float64       // copy() of Bytes between large buffers, same threads
	Ratio       float64       // GatherGBps / MemcpyGBps
	GatherPerOp time.Duration // median wall-clock time of one gather
	MemcpyPerOp time.Duration // median wall-clock time of one copy

	// The same with the matrix on plain 4 KiB pages.
	Gather4KGBps float64
	Memcpy4KGBps float64
	Ratio4K      float64

	// Bytes gathered per second of CPU time the process received (all
	// threads), huge and plain pages: on a shared machine it estimates the
	// rate of an unloaded one per core (0 where CPU time is unavailable).
	GatherGBpsPerCPUSecond, Gather4KGBpsPerCPUSecond float64

	// Ratio of the rates per second of CPU time received (bytes / (CPU
	// time / Threads)), huge and plain pages: on a shared machine they
	// estimate the ratios of an unloaded one (0 where CPU time is
	// unavailable).
	BusyRatio, BusyRatio4K float64
}

// String formats the result on one line.
func (r GatherResult) String() string {
	return fmt.Sprintf("gather %d of %dx%d rows threads=%d: huge pages=%v %.2f GB/s, memcpy %.2f GB/s, ratio %.2f (CPU-time ratio %.2f); 4 KiB pages %.2f GB/s, memcpy %.2f GB/s, ratio %.2f (CPU-time ratio %.2f)",
		r.N, r.Rows, r.Cols, r.Threads, r.HugePages, r.GatherGBps, r.MemcpyGBps, r.Ratio, r.BusyRatio,
		r.Gather4KGBps, r.Memcpy4KGBps, r.Ratio4K, r.BusyRatio4K)
}

// BenchGather measures GatherHost of n random rows from a rows×cols host
// matrix (make it larger than the caches, e.g. 2.4M×100 = 960 MB) and,
// timed in alternation with it, copy() of the same number of bytes between
// two large buffers. It does so twice: with the matrix on plain pages, then
// on transparent huge pages where the system allows them. It needs memory
// for the matrix (once at a time) plus three n×cols buffers.
func BenchGather(rows, cols, n, threads int, minTime time.Duration) GatherResult {
	d := New(threads, 0)
	defer d.Close()
	d.SetPoolLimit(0)
	r := rng.New(2)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(r.Intn(rows))
	}
	dst, err := d.Alloc(n, cols)
	if err != nil {
		panic(err) // no budget: cannot happen
	}
	defer d.Free(dst)
	from := make([]float32, n*cols)
	for i := range from {
		from[i] = 1
	}
	to := make([]float32, n*cols)
	bytes := int64(n) * int64(cols) * 4
	gb := float64(bytes) / 1e9
	res := GatherResult{Rows: rows, Cols: cols, N: n, Threads: d.threads, Bytes: bytes}
	th := float64(d.threads)

	measure := func(huge bool) (g, mc timing, advised bool) {
		src := make([]float32, rows*cols)
		// Advise either way: the heap may hand back a range advised before.
		advised = adviseHuge(src, huge) && huge
		d.parallelFor(rows, grainRows(cols), func(lo, hi int) {
			for i := lo * cols; i < hi*cols; i++ {
				src[i] = float32(i & 1023)
			}
		})
		d.GatherHost(dst, src, idx)
		d.copy(to, from)
		ts := timeInterleaved(minTime,
			func() { d.GatherHost(dst, src, idx) },
			func() { d.copy(to, from) })
		return ts[0], ts[1], advised
	}
	busy := func(g, mc timing) float64 {
		if g.cpu <= 0 || mc.cpu <= 0 {
			return 0
		}
		return (gb / (g.cpu.Seconds() / th)) / (gb / (mc.cpu.Seconds() / th))
	}

	perCPU := func(g timing) float64 {
		if g.cpu <= 0 {
			return 0
		}
		return gb / g.cpu.Seconds()
	}
	g, mc, _ := measure(false)
	res.Gather4KGBpsPerCPUSecond = perCPU(g)
	res.Gather4KGBps = gb / g.wall.Seconds()
	res.Memcpy4KGBps = gb / mc.wall.Seconds()
	res.Ratio4K = res.Gather4KGBps / res.Memcpy4KGBps
	res.BusyRatio4K = busy(g, mc)
	runtime.GC()
	debug.FreeOSMemory() // give the first matrix back before the second

	g, mc, res.HugePages = measure(true)
	res.GatherPerOp, res.MemcpyPerOp = g.wall, mc.wall
	res.GatherGBps = gb / g.wall.Seconds()
	res.GatherGBpsPerCPUSecond = perCPU(g)
	res.MemcpyGBps = gb / mc.wall.Seconds()
	res.Ratio = res.GatherGBps / res.MemcpyGBps
	res.BusyRatio = busy(g, mc)
	runtime.GC()
	debug.FreeOSMemory()
	return res
}

func benchTensor(d *Device, r *rng.Rand, rows, cols int) *tensor.Tensor {
	t, err := d.Alloc(rows, cols)
	if err != nil {
		panic(err) // no budget: cannot happen
	}
	for i := range t.Data {
		t.Data[i] = 2*r.Float32() - 1
	}
	return t
}

// timing is the median wall-clock and CPU time of repeated runs.
type timing struct {
	runs int
	wall time.Duration // median wall-clock time of one run
	cpu  time.Duration // median CPU time of one run (0 if unknown)
}

// timeMedian runs fn repeatedly for at least minTime (and at least 3
// times) and returns the medians of its wall-clock and CPU times.
func timeMedian(minTime time.Duration, fn func()) timing {
	return timeInterleaved(minTime, fn)[0]
}

// timeInterleaved runs fns in turn, round after round, for at least
// minTime (and at least 3 rounds) and returns each one's medians.
func timeInterleaved(minTime time.Duration, fns ...func()) []timing {
	walls := make([][]time.Duration, len(fns))
	cpus := make([][]time.Duration, len(fns))
	start := time.Now()
	for r := 0; r < 3 || time.Since(start) < minTime; r++ {
		for i, fn := range fns {
			c0, t0 := processCPUTime(), time.Now()
			fn()
			walls[i] = append(walls[i], time.Since(t0))
			cpus[i] = append(cpus[i], processCPUTime()-c0)
		}
	}
	out := make([]timing, len(fns))
	for i := range fns {
		out[i] = timing{runs: len(walls[i]), wall: median(walls[i]), cpu: median(cpus[i])}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
