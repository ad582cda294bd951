//go:build cuda

package cuda

import (
	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// These tests need a GPU: go test -tags cuda ./gnn/device/cuda. Every
// kernel is compared with the CPU backend on random inputs: relative error
// at most 1e-4 of the magnitude of the terms summed, and bit-identical
// results where the kernels reproduce the CPU's arithmetic exactly
// (SumRows, Relu, ReluBackward, DropoutMask, Argmax, gathers and copies).

// tol is the relative tolerance of the comparisons.
const tol = 1e-4

// testOrdinal is the GPU the tests use ($GNNSCOPE_TEST_GPU, default 0).
func testOrdinal() int {
	n, _ := strconv.Atoi(os.Getenv("GNNSCOPE_TEST_GPU"))
	return n
}

// openTest opens the test GPU. Without a driver or a device the test is
// skipped, unless $GNNSCOPE_TEST_GPU is set: then a GPU is required.
func openTest(t testing.TB, opt Options) *Device {
	t.Helper()
	d, err := Open(testOrdinal(), opt)
	if err != nil && os.Getenv("GNNSCOPE_TEST_GPU") == "" && cudrv.NoGPU(err) {
		t.Skipf("no GPU here (set GNNSCOPE_TEST_GPU to require one): %v", err)
	}
	if err != nil {
		t.Fatalf("open cuda:%d: %v", testOrdinal(), err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

// pair holds the same values on the CPU and on the GPU.
type pair struct {
	c *tensor.Tensor // CPU
	g *tensor.Tensor // GPU
}

type env struct {
	t   testing.TB
	cpu *cpu.Device
	gpu *Device
	r   *rng.Rand
}

func newEnv(t testing.TB, opt Options) *env {
	return &env{t: t, cpu: cpu.New(2, 0), gpu: openTest(t, opt), r: rng.New(42)}
}

// rand returns a rows×cols pair of uniform values in [-1, 1).
func (e *env) rand(rows, cols int) pair {
	e.t.Helper()
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = 2*e.r.Float32() - 1
	}
	return e.from(rows, cols, v)
}

// from returns a pair holding v.
func (e *env) from(rows, cols int, v []float32) pair {
	e.t.Helper()
	c, err := e.cpu.Alloc(rows, cols)
	if err != nil {
		e.t.Fatal(err)
	}
	copy(c.Data, v)
	g, err := e.gpu.Alloc(rows, cols)
	if err != nil {
		e.t.Fatal(err)
	}
	e.gpu.CopyFromHost(g, v)
	return pair{c, g}
}

func (e *env) zeros(rows, cols int) pair { return e.from(rows, cols, make([]float32, rows*cols)) }

func (e *env) free(ps ...pair) {
	for _, p := range ps {
		e.cpu.Free(p.c)
		e.gpu.Free(p.g)
	}
}

// host returns the GPU tensor's values.
func (e *env) host(g *tensor.Tensor) []float32 {
	out := make([]float32, g.Len())
	e.gpu.CopyToHost(out, g)
	return out
}

// check compares the GPU tensor with the CPU one: |g-c| <= tol*(|c|+scale)
// elementwise, scale being the magnitude of the terms summed into an
// element (1 for elementwise ops).
func (e *env) check(what string, p pair, scale float64) {
	e.t.Helper()
	got := e.host(p.g)
	for i, w := range p.c.Data[:p.c.Len()] {
		g := got[i]
		if math.IsNaN(float64(w)) != math.IsNaN(float64(g)) || math.Abs(float64(g)-float64(w)) > tol*(math.Abs(float64(w))+scale) {
			e.t.Fatalf("%s: element %d (row %d) = %v, CPU %v (scale %v)", what, i, i/max(p.c.Cols, 1), g, w, scale)
		}
	}
}

// same requires bit-identical values.
func (e *env) same(what string, p pair) {
	e.t.Helper()
	got := e.host(p.g)
	for i, w := range p.c.Data[:p.c.Len()] {
		if math.Float32bits(got[i]) != math.Float32bits(w) {
			e.t.Fatalf("%s: element %d = %v (%#x), CPU %v (%#x)", what, i, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
		}
	}
}

func TestOpenInfo(t *testing.T) {
	d := openTest(t, Options{})
	info := d.Info()
	if info.Backend != "cuda" || info.Name == "" || info.Memory <= 0 || d.Name() != fmt.Sprintf("cuda:%d", testOrdinal()) {
		t.Fatalf("info %+v, name %s", info, d.Name())
	}
	free, total, err := d.MemInfo()
	if err != nil || total != info.Memory || free <= 0 || free > total {
		t.Fatalf("MemInfo %d/%d, %v (device memory %d)", free, total, err, info.Memory)
	}
	t.Logf("%s: %s, compute %s, %.1f GiB, %s, %d SMs", d.Name(), info.Name, info.Compute, float64(info.Memory)/(1<<30), info.Driver, d.sms)
}

func TestGemm(t *testing.T) {
	e := newEnv(t, Options{})
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {63, 65, 17}, {64, 64, 64}, {130, 70, 33}, {257, 129, 300},
		{200, 64, 5000}, // split K
		{64, 256, 9000}, // split K, several tiles
	}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}} {
					alpha, beta := ab[0], ab[1]
					var a, b pair
					if ta {
						a = e.rand(k, m)
					} else {
						a = e.rand(m, k)
					}
					if tb {
						b = e.rand(n, k)
					} else {
						b = e.rand(k, n)
					}
					c := e.rand(m, n)
					e.cpu.Gemm(ta, tb, alpha, a.c, b.c, beta, c.c)
					e.gpu.Gemm(ta, tb, alpha, a.g, b.g, beta, c.g)
					e.check(fmt.Sprintf("gemm %dx%dx%d ta=%v tb=%v alpha=%v beta=%v", m, n, k, ta, tb, alpha, beta), c, float64(k)*math.Abs(float64(alpha))+1)
					e.free(a, b, c)
				}
			}
		}
	}
	// beta 0 ignores NaNs in C; alpha 0 and an empty K only scale by beta.
	a, b := e.rand(10, 0), e.rand(0, 12)
	nan := make([]float32, 120)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	c := e.from(10, 12, nan)
	e.cpu.Gemm(false, false, 1, a.c, b.c, 0, c.c)
	e.gpu.Gemm(false, false, 1, a.g, b.g, 0, c.g)
	e.same("gemm empty K, beta 0", c)
	x, y, z := e.rand(8, 9), e.rand(9, 7), e.from(8, 7, nan[:56])
	e.cpu.Gemm(false, false, 1, x.c, y.c, 0, z.c)
	e.gpu.Gemm(false, false, 1, x.g, y.g, 0, z.g)
	e.check("gemm beta 0 over NaN", z, 10)
	w := e.rand(8, 7)
	e.cpu.Gemm(false, false, 0, x.c, y.c, 0.5, w.c)
	e.gpu.Gemm(false, false, 0, x.g, y.g, 0.5, w.g)
	e.same("gemm alpha 0", w)
	// Row views (offsets into a larger buffer).
	big := e.rand(40, 9)
	av := pair{big.c.RowSlice(5, 25), big.g.RowSlice(5, 25)}
	out := e.zeros(20, 7)
	e.cpu.Gemm(false, false, 1, av.c, y.c, 0, out.c)
	e.gpu.Gemm(false, false, 1, av.g, y.g, 0, out.g)
	e.check("gemm of a view", out, 10)
}

// randBlock returns a block with empty rows, an isolated source, duplicate
// edges and, when weighted, random weights.
func randBlock(r *rng.Rand, numDst, numSrc int, weighted bool) *graph.Block {
	b := &graph.Block{NumDst: numDst, NumSrc: numSrc, Indptr: make([]int64, numDst+1)}
	for i := 0; i < numDst; i++ {
		deg := 0
		if r.Intn(4) != 0 {
			deg = 1 + r.Intn(40)
		}
		for k := 0; k < deg; k++ {
			s := r.Intn(max(numSrc-1, 1))
			b.Indices = append(b.Indices, int32(s))
			if k > 0 && r.Intn(5) == 0 {
				b.Indices = append(b.Indices, int32(s))
			}
		}
		b.Indptr[i+1] = int64(len(b.Indices))
	}
	if weighted {
		b.Weights = make([]float32, len(b.Indices))
		for i := range b.Weights {
			b.Weights[i] = 2*r.Float32() - 0.5
		}
	}
	return b
}

func TestSpMM(t *testing.T) {
	e := newEnv(t, Options{})
	for _, cols := range []int{1, 31, 64, 130, 300} {
		for _, agg := range []device.Agg{device.AggSum, device.AggMean, device.AggWeighted} {
			for _, weighted := range []bool{false, true} {
				blk := randBlock(e.r, 300, 1000, weighted)
				x := e.rand(blk.NumSrc, cols)
				out := e.rand(blk.NumDst, cols)
				e.cpu.SpMM(out.c, blk, x.c, agg)
				e.gpu.SpMM(out.g, blk, x.g, agg)
				e.check(fmt.Sprintf("spmm %v cols %d weighted %v", agg, cols, weighted), out, 80)
				dout := e.rand(blk.NumDst, cols)
				dx := e.rand(blk.NumSrc, cols)
				e.cpu.SpMMT(dx.c, blk, dout.c, agg)
				e.gpu.SpMMT(dx.g, blk, dout.g, agg)
				e.check(fmt.Sprintf("spmmT %v cols %d weighted %v", agg, cols, weighted), dx, 80)
				e.free(x, out, dout, dx)
			}
		}
	}
	// A cached block is reused; a block whose arrays were replaced is
	// uploaded again.
	blk := randBlock(e.r, 50, 60, true)
	x := e.rand(60, 8)
	out := e.zeros(50, 8)
	e.gpu.SpMM(out.g, blk, x.g, device.AggWeighted)
	n0, _ := e.gpu.blocks.size()
	e.gpu.SpMM(out.g, blk, x.g, device.AggWeighted)
	if n1, _ := e.gpu.blocks.size(); n1 != n0 {
		t.Fatalf("a second use uploaded the block again (%d entries, was %d)", n1, n0)
	}
	blk.Weights = slices.Clone(blk.Weights)
	for i := range blk.Weights {
		blk.Weights[i] *= 2
	}
	e.cpu.SpMM(out.c, blk, x.c, device.AggWeighted)
	e.gpu.SpMM(out.g, blk, x.g, device.AggWeighted)
	e.check("spmm after new weights", out, 80)
}

func TestGatherScatter(t *testing.T) {
	e := newEnv(t, Options{})
	src := e.rand(500, 70)
	idx := make([]int32, 2000)
	for i := range idx {
		idx[i] = int32(e.r.Intn(500))
	}
	dst := e.zeros(2000, 70)
	e.cpu.Gather(dst.c, src.c, idx)
	e.gpu.Gather(dst.g, src.g, idx)
	e.same("gather", dst)
	acc := e.rand(500, 70)
	e.cpu.ScatterAdd(acc.c, dst.c, idx)
	e.gpu.ScatterAdd(acc.g, dst.g, idx)
	e.same("scatter-add with repeats (index order, as the CPU)", acc)
	hostSrc := make([]float32, 800*33)
	for i := range hostSrc {
		hostSrc[i] = e.r.Float32()
	}
	hidx := idx[:900]
	for i := range hidx {
		hidx[i] %= 800
	}
	hd := e.zeros(900, 33)
	e.cpu.GatherHost(hd.c, hostSrc, hidx)
	e.gpu.GatherHost(hd.g, hostSrc, hidx)
	e.same("gather host", hd)
}

// TestTransfersLarge moves more than a staging buffer each way, through
// the synchronous and the asynchronous device.
func TestTransfersLarge(t *testing.T) {
	for _, async := range []bool{false, true} {
		d := openTest(t, Options{AsyncTransfer: async})
		n := 5*maxStage/4 + 3
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%1000) - 500
		}
		x, err := d.Alloc(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		d.CopyFromHost(x, v)
		y, _ := d.Alloc(n, 1)
		d.Copy(y, x)
		got := make([]float32, n)
		d.CopyToHost(got, y)
		if !slices.Equal(got, v) {
			t.Fatalf("async %v: round trip differs", async)
		}
		d.Zero(y)
		d.CopyToHost(got, y)
		if slices.ContainsFunc(got, func(f float32) bool { return f != 0 }) {
			t.Fatalf("async %v: Zero left values", async)
		}
		// Rows gathered in several staging pieces.
		cols := 1000
		rows := 3 * maxStage / (cols * 4)
		host := make([]float32, (rows+10)*cols)
		for i := range host {
			host[i] = float32(i)
		}
		idx := make([]int32, rows)
		for i := range idx {
			idx[i] = int32((i * 7) % (rows + 10))
		}
		g, _ := d.Alloc(rows, cols)
		var spanDur int64 = -1
		var mu sync.Mutex
		d.GatherHostTimed(g, host, idx, func(start, dur int64) {
			mu.Lock()
			spanDur = dur
			mu.Unlock()
		})
		out := make([]float32, rows*cols)
		d.CopyToHost(out, g)
		for i, r := range idx {
			if out[i*cols] != host[int(r)*cols] || out[i*cols+cols-1] != host[int(r)*cols+cols-1] {
				t.Fatalf("async %v: gathered row %d wrong", async, i)
			}
		}
		d.Sync()
		mu.Lock()
		if spanDur <= 0 {
			t.Fatalf("async %v: no transfer span (dur %d)", async, spanDur)
		}
		mu.Unlock()
		d.Free(x)
		d.Free(y)
		d.Free(g)
	}
}

func TestElementwise(t *testing.T) {
	e := newEnv(t, Options{})
	const rows, cols = 1000, 77
	x := e.rand(rows, cols)
	b := e.rand(1, cols)
	e.cpu.AddBias(x.c, b.c)
	e.gpu.AddBias(x.g, b.g)
	e.same("add bias", x)
	db := e.zeros(1, cols)
	e.cpu.SumRows(db.c, x.c)
	e.gpu.SumRows(db.g, x.g)
	e.same("sum rows (double chunks, as the CPU)", db)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -1e-38, 1e-38}
	sv := make([]float32, 4*len(special))
	for i := range sv {
		sv[i] = special[i%len(special)]
	}
	s := e.from(4, len(special), sv)
	y := e.zeros(4, len(special))
	e.cpu.Relu(y.c, s.c)
	e.gpu.Relu(y.g, s.g)
	e.same("relu of special values", y)
	dy := e.rand(4, len(special))
	dx := e.zeros(4, len(special))
	e.cpu.ReluBackward(dx.c, dy.c, s.c)
	e.gpu.ReluBackward(dx.g, dy.g, s.g)
	e.same("relu backward on special values", dx)
	r := e.zeros(rows, cols)
	e.cpu.Relu(r.c, x.c)
	e.gpu.Relu(r.g, x.g)
	e.same("relu", r)
	e.cpu.Relu(x.c, x.c)
	e.gpu.Relu(x.g, x.g)
	e.same("relu in place", x)
	for _, p := range []float32{0, 0.1, 0.5, 0.6, 1} {
		for _, shape := range [][2]int{{1, 1}, {63, 3}, {64, 5}, {1000, 77}, {129, 1}} {
			m := e.zeros(shape[0], shape[1])
			e.cpu.DropoutMask(m.c, p, 12345)
			e.gpu.DropoutMask(m.g, p, 12345)
			e.same(fmt.Sprintf("dropout mask p %v shape %v", p, shape), m)
			e.free(m)
		}
	}
	a, c := e.rand(rows, cols), e.rand(rows, cols)
	o := e.zeros(rows, cols)
	e.cpu.Mul(o.c, a.c, c.c)
	e.gpu.Mul(o.g, a.g, c.g)
	e.same("mul", o)
	e.cpu.Add(o.c, o.c, c.c)
	e.gpu.Add(o.g, o.g, c.g)
	e.same("add in place", o)
	e.cpu.Axpy(-0.75, a.c, o.c)
	e.gpu.Axpy(-0.75, a.g, o.g)
	e.check("axpy", o, 1)
	e.cpu.Scale(3.5, o.c)
	e.gpu.Scale(3.5, o.g)
	e.check("scale", o, 1)
}

func TestSoftmaxArgmax(t *testing.T) {
	e := newEnv(t, Options{})
	for _, shape := range [][2]int{{1, 1}, {37, 2}, {600, 47}, {300, 200}} {
		rows, cols := shape[0], shape[1]
		l := e.rand(rows, cols)
		e.cpu.Scale(8, l.c)
		e.gpu.Scale(8, l.g)
		labels := make([]int32, rows)
		for i := range labels {
			labels[i] = int32(e.r.Intn(cols))
			if i%7 == 3 {
				labels[i] = -1
			}
		}
		g := e.rand(rows, cols)
		lc, cc := e.cpu.SoftmaxCrossEntropy(l.c, labels, g.c)
		lg, cg := e.gpu.SoftmaxCrossEntropy(l.g, labels, g.g)
		if cc != cg || math.Abs(lc-lg) > 1e-6*(1+math.Abs(lc)) {
			t.Fatalf("softmax %v: loss %v correct %d, CPU %v %d", shape, lg, cg, lc, cc)
		}
		e.check(fmt.Sprintf("softmax gradient %v", shape), g, 1.0/float64(rows))
		lg2, cg2 := e.gpu.SoftmaxCrossEntropy(l.g, labels, nil)
		if lg2 != lg || cg2 != cg {
			t.Fatal("softmax without a gradient differs")
		}
		ac, ag := make([]int32, rows), make([]int32, rows)
		e.cpu.Argmax(ac, l.c)
		e.gpu.Argmax(ag, l.g)
		if !slices.Equal(ac, ag) {
			t.Fatalf("argmax %v differs", shape)
		}
	}
	// Ties and -inf rows: the first maximum, 0 for a row without one.
	inf := float32(math.Inf(-1))
	tie := e.from(3, 4, []float32{1, 3, 3, 2, inf, inf, inf, inf, float32(math.NaN()), 5, 5, 0})
	ac, ag := make([]int32, 3), make([]int32, 3)
	e.cpu.Argmax(ac, tie.c)
	e.gpu.Argmax(ag, tie.g)
	if !slices.Equal(ac, ag) {
		t.Fatalf("argmax ties: %v, CPU %v", ag, ac)
	}
}

func TestAdam(t *testing.T) {
	e := newEnv(t, Options{})
	p, m, v := e.rand(300, 70), e.zeros(300, 70), e.zeros(300, 70)
	for step := 1; step <= 20; step++ {
		g := e.rand(300, 70)
		e.cpu.Adam(p.c, g.c, m.c, v.c, step, 0.01, 0.9, 0.999, 1e-8, 5e-4)
		e.gpu.Adam(p.g, g.g, m.g, v.g, step, 0.01, 0.9, 0.999, 1e-8, 5e-4)
		e.free(g)
	}
	e.check("adam param", p, 1)
	e.check("adam m", m, 1)
	e.check("adam v", v, 1)
}

// TestAllocator checks exact live and peak accounting, the budget, the
// scoped view and reuse of freed blocks.
func TestAllocator(t *testing.T) {
	d := openTest(t, Options{Budget: 1 << 20})
	s := device.NewScope()
	sd := device.Scoped(d, s)
	a, err := sd.Alloc(100, 100) // 40000
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sd.Alloc(1, 10) // 40
	sd.Free(a)
	if st := d.Mem().Stats(); st.Live != 40 || st.Peak != 40040 || s.Peak() != 40040 || s.Live() != 40 {
		t.Fatalf("accounting %+v, scope %d/%d", st, s.Live(), s.Peak())
	}
	c, _ := d.Alloc(100, 100) // served from the cache
	if ps := d.Stats().Pool; ps.Hits < 1 {
		t.Fatalf("freed block not reused: %+v", ps)
	}
	got := make([]float32, 10000)
	d.CopyToHost(got, c)
	if slices.ContainsFunc(got, func(f float32) bool { return f != 0 }) {
		t.Fatal("a reused block was not zeroed")
	}
	big, err := d.Alloc(1<<18, 1) // 1 MiB: past the budget with 40040 live
	if !device.IsOOM(err) || big != nil {
		t.Fatalf("alloc past the budget: %v", err)
	}
	d.Free(c)
	d.Free(b)
	d.Free(b) // double free ignored
	if st := d.Mem().Stats(); st.Live != 0 {
		t.Fatalf("live %d after freeing everything", st.Live)
	}
	x, err := d.Alloc(1<<18, 1)
	if err != nil {
		t.Fatalf("alloc of exactly the budget: %v", err)
	}
	d.Free(x)
	// Far beyond the GPU: a typed OOM as well.
	d.Mem().SetBudget(0)
	if _, err := d.Alloc(int(d.info.Memory/4)+1, 8); !device.IsOOM(err) {
		t.Fatalf("alloc beyond the GPU's memory: %v", err)
	}
}

// TestAsyncOrdering stresses the event ordering of the asynchronous
// device: sampler-like goroutines gather batches on the copy stream into
// tensors that are freed and reallocated while the compute stream uses
// them, and every batch's result must match the CPU.
func TestAsyncOrdering(t *testing.T) {
	d := openTest(t, Options{AsyncTransfer: true})
	c := cpu.New(1, 0)
	const rows, cols, nodes = 512, 64, 5000
	feats := make([]float32, nodes*cols)
	r := rng.New(3)
	for i := range feats {
		feats[i] = r.Float32()
	}
	w := make([]float32, cols*16)
	for i := range w {
		w[i] = r.Float32() - 0.5
	}
	wg, _ := d.Alloc(cols, 16)
	d.CopyFromHost(wg, w)
	wc, _ := c.Alloc(cols, 16)
	copy(wc.Data, w)
	type batch struct {
		idx []int32
		x   *tensor.Tensor
	}
	ch := make(chan batch, 4)
	var prod sync.WaitGroup
	for p := 0; p < 2; p++ {
		prod.Add(1)
		go func(p int) {
			defer prod.Done()
			r := rng.New(uint64(p) + 10)
			for i := 0; i < 25; i++ {
				idx := make([]int32, rows)
				for j := range idx {
					idx[j] = int32(r.Intn(nodes))
				}
				x, err := d.Alloc(rows, cols)
				if err != nil {
					t.Error(err)
					return
				}
				d.GatherHost(x, feats, idx)
				ch <- batch{idx, x}
			}
		}(p)
	}
	go func() { prod.Wait(); close(ch) }()
	n := 0
	for b := range ch {
		out, _ := d.Alloc(rows, 16)
		d.Gemm(false, false, 1, b.x, wg, 0, out)
		d.Free(b.x) // freed while the gemm may still run
		got := make([]float32, rows*16)
		d.CopyToHost(got, out)
		d.Free(out)
		xc, _ := c.Alloc(rows, cols)
		c.GatherHost(xc, feats, b.idx)
		oc, _ := c.Alloc(rows, 16)
		c.Gemm(false, false, 1, xc, wc, 0, oc)
		for i, v := range oc.Data {
			if math.Abs(float64(got[i]-v)) > tol*(math.Abs(float64(v))+float64(cols)) {
				t.Fatalf("batch %d element %d: %v, CPU %v", n, i, got[i], v)
			}
		}
		c.Free(xc)
		c.Free(oc)
		n++
	}
	if n != 50 {
		t.Fatalf("%d batches", n)
	}
}

// TestPinnedHistoryPath runs the history operations on pinned memory:
// asynchronous pushes (a contiguous copy and a scatter) and pulls (a
// gather kernel reading host memory), then host reads after Sync.
func TestPinnedHistoryPath(t *testing.T) {
	d := openTest(t, Options{})
	const n, dim = 1000, 48
	h, err := d.AllocPinned(n * dim)
	if err != nil {
		t.Fatal(err)
	}
	defer d.FreePinned(h)
	vals := make([]float32, 100*dim)
	for i := range vals {
		vals[i] = float32(i) + 0.5
	}
	src, _ := d.Alloc(100, dim)
	d.CopyFromHost(src, vals)
	d.CopyToHost(h[200*dim:300*dim], src) // PushRange
	idx := make([]int32, 100)
	for i := range idx {
		idx[i] = int32(999 - 3*i)
	}
	d.ScatterToHost(h, src, idx) // Push
	pulled, _ := d.Alloc(100, dim)
	d.GatherHost(pulled, h, idx) // Pull, ordered after the push on the history stream
	back := make([]float32, 100*dim)
	d.CopyToHost(back, pulled)
	if !slices.Equal(back, vals) {
		t.Fatal("pull after push differs from what was pushed")
	}
	d.Sync()
	if !slices.Equal(h[200*dim:300*dim], vals) {
		t.Fatal("push range did not land in pinned memory")
	}
	for i, r := range idx {
		if !slices.Equal(h[int(r)*dim:(int(r)+1)*dim], vals[i*dim:(i+1)*dim]) {
			t.Fatalf("scattered row %d wrong", i)
		}
	}
	// Writing src right after a push must not change what the push copies.
	d.CopyToHost(h[0:100*dim], src)
	d.Zero(src)
	d.Sync()
	if !slices.Equal(h[0:100*dim], vals) {
		t.Fatal("a push saw a later write to its source")
	}
	r2, _ := d.Alloc(100, dim)
	d.CopyFromHost(r2, h[0:100*dim]) // PullRange
	d.CopyToHost(back, r2)
	if !slices.Equal(back, vals) {
		t.Fatal("pull range differs")
	}
}

// TestTimeline checks that a span around real work has a plausible
// duration and lies within the host-clock interval that queued and waited
// for it.
func TestTimeline(t *testing.T) {
	d := openTest(t, Options{})
	start := time.Now()
	d.SetClock(func() int64 { return int64(time.Since(start)) })
	a, _ := d.Alloc(2048, 2048)
	b, _ := d.Alloc(2048, 2048)
	c, _ := d.Alloc(2048, 2048)
	before := int64(time.Since(start))
	m0 := d.Mark(device.StreamCompute)
	for i := 0; i < 5; i++ {
		d.Gemm(false, false, 1, a, b, 0, c)
	}
	m1 := d.Mark(device.StreamCompute)
	var mu sync.Mutex
	var s0, dur int64 = -1, -1
	d.Span(m0, m1, func(s, du int64) { mu.Lock(); s0, dur = s, du; mu.Unlock() })
	d.Sync()
	after := int64(time.Since(start))
	mu.Lock()
	defer mu.Unlock()
	if dur <= 0 || s0 < before-int64(time.Millisecond) || s0+dur > after+int64(time.Millisecond) {
		t.Fatalf("span [%d, +%d] outside the host interval [%d, %d]", s0, dur, before, after)
	}
	t.Logf("5 gemms of 2048^3: %.3f ms on the device (%.1f GFLOP/s)", float64(dur)/1e6, 5*2*math.Pow(2048, 3)/float64(dur))
}
