package devcheck

import (
	"fmt"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// BenchResult is one kernel's measured speed.
type BenchResult struct {
	Op      string  `json:"op"`
	Shape   string  `json:"shape"`
	Iters   int     `json:"iters"`
	Seconds float64 `json:"seconds"` // per call
	Rate    float64 `json:"rate"`
	Unit    string  `json:"unit"` // of Rate: GFLOP/s, GB/s
}

// Bench times dev's main kernels at the shapes of GraphSAGE on
// synth-products (batches of 1024 targets, fanouts 15,10,5, 256 hidden;
// scale < 1 shrinks every size, e.g. for a CPU). Each operation runs once
// to warm up, then repeatedly for at least minTime; an asynchronous device
// is synchronized before the clock stops.
func Bench(dev device.Device, scale float64, minTime time.Duration) ([]BenchResult, error) {
	b := &bencher{dev: dev, min: minTime, r: rng.New(7)}
	sz := func(n int) int { return max(int(float64(n)*scale), 1) }
	defer func() {
		for _, t := range b.owned {
			dev.Free(t)
		}
	}()
	// Square gemm, the forward product of a layer and its weight gradient.
	for _, s := range [][3]int{{sz(4096), sz(4096), sz(4096)}, {sz(100_000), 256, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, w, c := b.rand(m, k), b.rand(k, n), b.rand(m, n)
		if b.err != nil {
			return b.out, b.err
		}
		b.time("gemm_nn", fmt.Sprintf("%dx%dx%d", m, n, k), 2*float64(m)*float64(n)*float64(k)/1e9, "GFLOP/s", func() {
			dev.Gemm(false, false, 1, a, w, 0, c)
		})
	}
	x, dy, dw := b.rand(sz(100_000), 256), b.rand(sz(100_000), 256), b.rand(256, 256)
	if b.err != nil {
		return b.out, b.err
	}
	b.time("gemm_tn", fmt.Sprintf("256x256 over %d rows", x.Rows), 2*256*256*float64(x.Rows)/1e9, "GFLOP/s", func() {
		dev.Gemm(true, false, 1, x, dy, 0, dw)
	})
	// Mean aggregation of a sampled block: 15 neighbors per destination.
	nd, ns := sz(100_000), sz(1_000_000)
	blk := &graph.Block{NumDst: nd, NumSrc: ns, Indptr: make([]int64, nd+1), Indices: make([]int32, 0, nd*15)}
	for i := 0; i < nd; i++ {
		for e := 0; e < 15; e++ {
			blk.Indices = append(blk.Indices, int32(b.r.Intn(ns)))
		}
		blk.Indptr[i+1] = int64(len(blk.Indices))
	}
	src, out := b.rand(ns, 256), b.rand(nd, 256)
	if b.err != nil {
		return b.out, b.err
	}
	bytes := float64(len(blk.Indices)) * 256 * 4 / 1e9
	b.time("spmm_mean", fmt.Sprintf("%d<-%d, 15 per row, 256 cols", nd, ns), bytes, "GB/s", func() {
		dev.SpMM(out, blk, src, device.AggMean)
	})
	b.time("spmmT_mean", fmt.Sprintf("%d<-%d, 15 per row, 256 cols", nd, ns), bytes, "GB/s", func() {
		dev.SpMMT(src, blk, out, device.AggMean)
	})
	// Features of a batch gathered from host memory (100 per node).
	hostRows := sz(2_400_000)
	host := make([]float32, hostRows*100)
	for i := range host {
		host[i] = float32(i % 97)
	}
	idx := make([]int32, sz(200_000))
	for i := range idx {
		idx[i] = int32(b.r.Intn(hostRows))
	}
	feats := b.rand(len(idx), 100)
	if b.err != nil {
		return b.out, b.err
	}
	b.time("gather_host", fmt.Sprintf("%d rows of 100 from %d", len(idx), hostRows), float64(len(idx))*400/1e9, "GB/s", func() {
		dev.GatherHost(feats, host, idx)
	})
	back := make([]float32, feats.Len())
	b.time("copy_to_host", fmt.Sprintf("%d floats", feats.Len()), float64(feats.Len())*4/1e9, "GB/s", func() {
		dev.CopyToHost(back, feats)
	})
	return b.out, b.err
}

type bencher struct {
	dev   device.Device
	min   time.Duration
	r     *rng.Rand
	out   []BenchResult
	owned []*tensor.Tensor
	err   error
}

func (b *bencher) rand(rows, cols int) *tensor.Tensor {
	if b.err != nil {
		return nil
	}
	t, err := b.dev.Alloc(rows, cols)
	if err != nil {
		b.err = fmt.Errorf("devcheck: bench: alloc %dx%d: %w", rows, cols, err)
		return nil
	}
	b.owned = append(b.owned, t)
	v := make([]float32, t.Len())
	for i := range v {
		v[i] = 2*b.r.Float32() - 1
	}
	b.dev.CopyFromHost(t, v)
	return t
}

// time runs fn until min has passed and records work/seconds per call.
func (b *bencher) time(op, shape string, work float64, unit string, fn func()) {
	fn()
	b.dev.Sync()
	n := 0
	t0 := time.Now()
	for n == 0 || time.Since(t0) < b.min {
		fn()
		n++
		if n%8 == 0 {
			b.dev.Sync()
		}
	}
	b.dev.Sync()
	per := time.Since(t0).Seconds() / float64(n)
	b.out = append(b.out, BenchResult{Op: op, Shape: shape, Iters: n, Seconds: per, Rate: work / per, Unit: unit})
}
