package cpu

import "testing"

// TestBenchSmoke runs the bench entry points on tiny shapes: they must
// complete and report positive rates (no timing is asserted).
func TestBenchSmoke(t *testing.T) {
	g := BenchGemmOp(true, false, 40, 33, 50, 2, 0)
	if g.GFLOPS <= 0 || g.Iters < 3 || g.Kernel == "" || g.Threads != 2 {
		t.Fatalf("BenchGemmOp: %+v", g)
	}
	_ = g.String()
	r := BenchGather(20000, 70, 3000, 2, 0)
	if r.GatherGBps <= 0 || r.MemcpyGBps <= 0 || r.Ratio <= 0 || r.Ratio4K <= 0 || r.Bytes != 3000*70*4 {
		t.Fatalf("BenchGather: %+v", r)
	}
	_ = r.String()
	AdviseHugePages(make([]float32, 10)) // too small: a no-op
}
