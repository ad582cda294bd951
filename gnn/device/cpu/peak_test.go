package cpu

import (
	"testing"
	"time"
)

// TestBenchPeakReports checks the peak's bookkeeping: a supported loop
// gives positive rates whose per-thread figure is the total over the
// threads; no figure is compared with a clock bound.
func TestBenchPeakReports(t *testing.T) {
	for _, threads := range []int{1, 2} {
		r := BenchPeak(threads, time.Millisecond)
		_, _, _, ok := peakLoop()
		if r.Supported != ok {
			t.Fatalf("Supported = %v, peakLoop says %v", r.Supported, ok)
		}
		if !ok {
			t.Skipf("no FMA loop for %s", GemmKernel())
		}
		if r.Iters < 3 || r.GFLOPS <= 0 || r.Kernel == "" {
			t.Fatalf("threads %d: %+v", threads, r)
		}
		if d := r.GFLOPSPerThread*float64(threads) - r.GFLOPS; d > 1e-9*r.GFLOPS || d < -1e-9*r.GFLOPS {
			t.Fatalf("per thread %v x %d != %v", r.GFLOPSPerThread, threads, r.GFLOPS)
		}
	}
}

func TestBenchPeakZeroThreads(t *testing.T) {
	if r := BenchPeak(0, time.Millisecond); r.GFLOPS != 0 || r.Iters != 0 {
		t.Fatalf("0 threads measured: %+v", r)
	}
}
