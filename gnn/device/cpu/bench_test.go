package cpu

import (
	"fmt"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// gemmBenchShapes are the products of a GNN layer: forward X·W on a
// sampled batch, the weight gradient Xᵀ·dY and the input gradient dY·Wᵀ.
var gemmBenchShapes = []struct {
	name           string
	transA, transB bool
	m, k, n        int
}{
	{"fwd_100kx256x256", false, false, 100_000, 256, 256},
	{"dW_256x100kx256", true, false, 256, 100_000, 256},
	{"dX_100kx256x256", false, true, 100_000, 256, 256},
	{"fwd_1024x100x256", false, false, 1024, 100, 256},
	{"dW_100x1024x256", true, false, 100, 1024, 256},
}

func BenchmarkGemm(b *testing.B) {
	for _, kern := range kernelsUnderTest() {
		for _, th := range []int{1, 2} {
			for _, s := range gemmBenchShapes {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", kern.name, s.name, th), func(b *testing.B) {
					d := New(th, 0)
					r := rng.New(1)
					ar, ac := s.m, s.k
					if s.transA {
						ar, ac = ac, ar
					}
					br, bc := s.k, s.n
					if s.transB {
						br, bc = bc, br
					}
					a := benchTensor(d, r, ar, ac)
					bb := benchTensor(d, r, br, bc)
					c := benchTensor(d, r, s.m, s.n)
					op := gemmOp{transA: s.transA, transB: s.transB, m: s.m, n: s.n, k: s.k, alpha: 1,
						a: a.Data, lda: a.Cols, b: bb.Data, ldb: bb.Cols, c: c.Data, ldc: c.Cols}
					d.gemm(&op, 0, kern)
					b.ResetTimer()
					c0 := processCPUTime()
					for b.Loop() {
						d.gemm(&op, 0, kern)
					}
					cpu := processCPUTime() - c0
					flops := 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9/float64(th), "GFLOP/s/core")
					if cpu > 0 {
						// Work per second of CPU received: on a shared machine it
						// estimates the per-core rate of an unloaded one.
						b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}

func BenchmarkGather(b *testing.B) {
	const rows, cols, n = 2_400_000, 100, 200_000
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			var res GatherResult
			for b.Loop() {
				res = BenchGather(rows, cols, n, th, time.Second)
			}
			b.ReportMetric(res.GatherGBps, "gather-GB/s")
			b.ReportMetric(res.MemcpyGBps, "memcpy-GB/s")
			b.ReportMetric(res.Ratio, "ratio")
			b.ReportMetric(res.BusyRatio, "cpu-ratio")
			b.ReportMetric(res.Gather4KGBps, "gather4K-GB/s")
			b.ReportMetric(res.Ratio4K, "ratio4K")
			b.ReportMetric(res.BusyRatio4K, "cpu-ratio4K")
		})
	}
}

func BenchmarkSpMM(b *testing.B) {
	r := rng.New(3)
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			d := New(th, 0)
			blk := randBlock(r, 100_000, 400_000, false)
			x := benchTensor(d, r, blk.NumSrc, 256)
			out := benchTensor(d, r, blk.NumDst, 256)
			dx := benchTensor(d, r, blk.NumSrc, 256)
			blk.Transpose()
			b.ResetTimer()
			for b.Loop() {
				d.SpMM(out, blk, x, 1)
				d.SpMMT(dx, blk, out, 1)
			}
		})
	}
}
