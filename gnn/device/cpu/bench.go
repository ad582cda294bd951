package cpu

import (
	"fmt"
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
	return fmt.Sprintf("gemm A%s·B%s %dx%dx%d threads=%d kernel=%s: %v/op, %.1f GFLOP/s (%.1f per core)",
		ta, tb, r.M, r.K, r.N, r.Threads, r.Kernel, r.PerOp, r.GFLOPS, r.GFLOPSPerCore)
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
	iters, per := timeMedian(minTime, func() { d.Gemm(transA, transB, 1, a, b, 0, c) })
	gf := 2 * float64(m) * float64(n) * float64(k) / per.Seconds() / 1e9
	return GemmResult{M: m, K: k, N: n, TransA: transA, TransB: transB, Threads: d.threads,
		Kernel: GemmKernel(), Iters: iters, PerOp: per, GFLOPS: gf, GFLOPSPerCore: gf / float64(d.threads)}
}

// GatherResult compares row-gather bandwidth with memcpy bandwidth.
type GatherResult struct {
	Rows, Cols  int // host feature matrix
	N           int // rows gathered per operation
	Threads     int
	Bytes       int64   // bytes gathered (and copied) per operation
	GatherGBps  float64 // GatherHost with uniformly random indices
	MemcpyGBps  float64 // copy() of Bytes between large buffers, same threads
	Ratio       float64 // GatherGBps / MemcpyGBps
	GatherPerOp time.Duration
	MemcpyPerOp time.Duration
}

// String formats the result on one line.
func (r GatherResult) String() string {
	return fmt.Sprintf("gather %d of %dx%d rows threads=%d: %.2f GB/s, memcpy %.2f GB/s, ratio %.2f",
		r.N, r.Rows, r.Cols, r.Threads, r.GatherGBps, r.MemcpyGBps, r.Ratio)
}

// BenchGather measures GatherHost of n random rows from a rows×cols host
// matrix (make it larger than the caches, e.g. 2.4M×100 = 960 MB) and, the
// same way, copy() of the same number of bytes between two large buffers.
func BenchGather(rows, cols, n, threads int, minTime time.Duration) GatherResult {
	d := New(threads, 0)
	d.SetPoolLimit(0)
	src := make([]float32, rows*cols)
	d.parallelFor(rows, grainRows(cols), func(lo, hi int) {
		for i := lo * cols; i < hi*cols; i++ {
			src[i] = float32(i & 1023)
		}
	})
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
	bytes := int64(n) * int64(cols) * 4
	d.GatherHost(dst, src, idx)
	gi, gper := timeMedian(minTime, func() { d.GatherHost(dst, src, idx) })
	_ = gi
	src = nil
	// memcpy: copy between two buffers of the same size as dst (both
	// larger than the caches for the sizes this is meant for).
	from := make([]float32, n*cols)
	for i := range from {
		from[i] = 1
	}
	to := dst.Data
	d.copy(to, from)
	_, mper := timeMedian(minTime, func() { d.copy(to, from) })
	res := GatherResult{Rows: rows, Cols: cols, N: n, Threads: d.threads, Bytes: bytes,
		GatherPerOp: gper, MemcpyPerOp: mper,
		GatherGBps: float64(bytes) / gper.Seconds() / 1e9,
		MemcpyGBps: float64(bytes) / mper.Seconds() / 1e9}
	res.Ratio = res.GatherGBps / res.MemcpyGBps
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

// timeMedian runs fn repeatedly for at least minTime (and at least 3
// times) and returns the number of runs and the median duration.
func timeMedian(minTime time.Duration, fn func()) (int, time.Duration) {
	var ds []time.Duration
	start := time.Now()
	for len(ds) < 3 || time.Since(start) < minTime {
		t0 := time.Now()
		fn()
		ds = append(ds, time.Since(t0))
	}
	// insertion sort: few samples
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && ds[j] < ds[j-1]; j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
	return len(ds), ds[len(ds)/2]
}
