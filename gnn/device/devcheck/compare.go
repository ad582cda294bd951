package devcheck

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Tolerance is the largest relative error Compare accepts: |got - want|
// over |want| plus the magnitude of the terms summed into the element.
const Tolerance = 1e-4

// Result is one operation's comparison.
type Result struct {
	Op    string `json:"op"`
	Shape string `json:"shape"`
	// MaxRelErr is the largest |got - want| / (|want| + scale) over the
	// elements, scale being the magnitude of the terms summed into one
	// (1 for elementwise operations).
	MaxRelErr float64 `json:"max_rel_err"`
	// Exact marks operations whose results must be bit-identical (the
	// backends do the same arithmetic); Mismatches counts elements that
	// differ in any bit.
	Exact      bool `json:"exact,omitempty"`
	Mismatches int  `json:"mismatches,omitempty"`
	OK         bool `json:"ok"`
}

// checker runs operations on both devices.
type checker struct {
	dev, ref device.Device
	r        *rng.Rand
	out      []Result
	err      error
}

// pair is one tensor on each device with the same values.
type pair struct{ d, r *tensor.Tensor }

// Compare runs every operation of the Device interface on dev and on ref
// with the same random inputs (seeded) and reports how far dev's results
// are from ref's. Shapes cover the kernels' edge cases (partial tiles, a
// split K, empty rows, repeated indices, transfers larger than a staging
// buffer).
func Compare(dev, ref device.Device, seed uint64) ([]Result, error) {
	c := &checker{dev: dev, ref: ref, r: rng.New(seed)}
	c.gemm()
	c.sparse()
	c.gathers()
	c.rowGathers()
	c.elementwise()
	c.loss()
	c.adam()
	c.transfers()
	return c.out, c.err
}

func (c *checker) alloc(rows, cols int) pair {
	d, err := c.dev.Alloc(rows, cols)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("devcheck: alloc %dx%d on %s: %w", rows, cols, c.dev.Name(), err)
	}
	r, err := c.ref.Alloc(rows, cols)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("devcheck: alloc %dx%d on %s: %w", rows, cols, c.ref.Name(), err)
	}
	if c.err != nil {
		panic(c.err)
	}
	return pair{d, r}
}

func (c *checker) values(rows, cols int, v []float32) pair {
	p := c.alloc(rows, cols)
	c.dev.CopyFromHost(p.d, v)
	c.ref.CopyFromHost(p.r, v)
	return p
}

func (c *checker) rand(rows, cols int) pair {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = 2*c.r.Float32() - 1
	}
	return c.values(rows, cols, v)
}

func (c *checker) zeros(rows, cols int) pair { return c.values(rows, cols, make([]float32, rows*cols)) }

func (c *checker) free(ps ...pair) {
	for _, p := range ps {
		c.dev.Free(p.d)
		c.ref.Free(p.r)
	}
}

func (c *checker) host(dev device.Device, t *tensor.Tensor) []float32 {
	v := make([]float32, t.Len())
	dev.CopyToHost(v, t)
	return v
}

// record compares p and appends the result.
func (c *checker) record(op, shape string, p pair, scale float64, exact bool) {
	got, want := c.host(c.dev, p.d), c.host(c.ref, p.r)
	c.recordSlices(op, shape, got, want, scale, exact)
}

func (c *checker) recordSlices(op, shape string, got, want []float32, scale float64, exact bool) {
	res := Result{Op: op, Shape: shape, Exact: exact}
	for i, w := range want {
		g := got[i]
		if math.Float32bits(g) != math.Float32bits(w) {
			res.Mismatches++
		}
		gn, wn := math.IsNaN(float64(g)), math.IsNaN(float64(w))
		var e float64
		switch {
		case gn && wn, g == w:
		case gn != wn, math.IsInf(float64(g), 0) || math.IsInf(float64(w), 0):
			e = math.Inf(1)
		default:
			e = math.Abs(float64(g)-float64(w)) / (math.Abs(float64(w)) + scale)
		}
		res.MaxRelErr = max(res.MaxRelErr, e)
	}
	res.OK = res.MaxRelErr <= Tolerance && (!exact || res.Mismatches == 0)
	if !exact {
		res.Mismatches = 0
	}
	c.out = append(c.out, res)
}

func (c *checker) gemm() {
	shapes := [][3]int{{1, 1, 1}, {63, 65, 17}, {130, 70, 33}, {257, 129, 300}, {200, 64, 5000}, {64, 256, 9000}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				var a, b pair
				if ta {
					a = c.rand(k, m)
				} else {
					a = c.rand(m, k)
				}
				if tb {
					b = c.rand(n, k)
				} else {
					b = c.rand(k, n)
				}
				out := c.rand(m, n)
				c.dev.Gemm(ta, tb, 0.75, a.d, b.d, 0.5, out.d)
				c.ref.Gemm(ta, tb, 0.75, a.r, b.r, 0.5, out.r)
				op := "gemm_" + map[bool]string{false: "n", true: "t"}[ta] + map[bool]string{false: "n", true: "t"}[tb]
				c.record(op, fmt.Sprintf("%dx%dx%d", m, n, k), out, 0.75*float64(k)+1, false)
				c.free(a, b, out)
			}
		}
	}
}

// randBlock returns a block with empty rows, an isolated source, repeated
// edges and random weights.
func (c *checker) randBlock(numDst, numSrc, maxDeg int) *graph.Block {
	b := &graph.Block{NumDst: numDst, NumSrc: numSrc, Indptr: make([]int64, numDst+1)}
	for i := 0; i < numDst; i++ {
		deg := 0
		if c.r.Intn(4) != 0 {
			deg = 1 + c.r.Intn(maxDeg)
		}
		for e := 0; e < deg; e++ {
			s := int32(c.r.Intn(max(numSrc-1, 1)))
			b.Indices = append(b.Indices, s)
			if e > 0 && c.r.Intn(5) == 0 {
				b.Indices = append(b.Indices, s)
			}
		}
		b.Indptr[i+1] = int64(len(b.Indices))
	}
	b.Weights = make([]float32, len(b.Indices))
	for i := range b.Weights {
		b.Weights[i] = 2*c.r.Float32() - 0.5
	}
	return b
}

func (c *checker) sparse() {
	for _, cols := range []int{1, 33, 256} {
		blk := c.randBlock(1000, 3000, 30)
		for _, agg := range []device.Agg{device.AggSum, device.AggMean, device.AggWeighted} {
			x, out := c.rand(blk.NumSrc, cols), c.rand(blk.NumDst, cols)
			c.dev.SpMM(out.d, blk, x.d, agg)
			c.ref.SpMM(out.r, blk, x.r, agg)
			shape := fmt.Sprintf("%d<-%d x %d", blk.NumDst, blk.NumSrc, cols)
			c.record("spmm_"+agg.String(), shape, out, 60, false)
			dout, dx := c.rand(blk.NumDst, cols), c.rand(blk.NumSrc, cols)
			c.dev.SpMMT(dx.d, blk, dout.d, agg)
			c.ref.SpMMT(dx.r, blk, dout.r, agg)
			c.record("spmmT_"+agg.String(), shape, dx, 60, false)
			c.free(x, out, dout, dx)
		}
	}
}

func (c *checker) gathers() {
	src := c.rand(700, 70)
	idx := make([]int32, 3000)
	for i := range idx {
		idx[i] = int32(c.r.Intn(700))
	}
	dst := c.zeros(3000, 70)
	c.dev.Gather(dst.d, src.d, idx)
	c.ref.Gather(dst.r, src.r, idx)
	c.record("gather", "3000 of 700x70", dst, 1, true)
	acc := c.rand(700, 70)
	c.dev.ScatterAdd(acc.d, dst.d, idx)
	c.ref.ScatterAdd(acc.r, dst.r, idx)
	c.record("scatter_add", "3000 into 700x70", acc, 1, true)
	host := make([]float32, 5000*100)
	for i := range host {
		host[i] = c.r.Float32()
	}
	hidx := make([]int32, 4096)
	for i := range hidx {
		hidx[i] = int32(c.r.Intn(5000))
	}
	hd := c.zeros(4096, 100)
	c.dev.GatherHost(hd.d, host, hidx)
	c.ref.GatherHost(hd.r, host, hidx)
	c.record("gather_host", "4096 of 5000x100", hd, 1, true)
	c.free(src, dst, acc, hd)
}

func (c *checker) elementwise() {
	const rows, cols = 2000, 77
	x, b := c.rand(rows, cols), c.rand(1, cols)
	c.dev.AddBias(x.d, b.d)
	c.ref.AddBias(x.r, b.r)
	c.record("add_bias", fmt.Sprintf("%dx%d", rows, cols), x, 1, true)
	db := c.zeros(1, cols)
	c.dev.SumRows(db.d, x.d)
	c.ref.SumRows(db.r, x.r)
	c.record("sum_rows", fmt.Sprintf("%dx%d", rows, cols), db, 1, true)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -1e-38, 1e-38, 2, -3}
	sv := make([]float32, rows*cols)
	for i := range sv {
		if i%5 == 0 {
			sv[i] = special[(i/5)%len(special)]
		} else {
			sv[i] = 2*c.r.Float32() - 1
		}
	}
	s := c.values(rows, cols, sv)
	y := c.zeros(rows, cols)
	c.dev.Relu(y.d, s.d)
	c.ref.Relu(y.r, s.r)
	c.record("relu", fmt.Sprintf("%dx%d with -0, NaN, inf", rows, cols), y, 1, true)
	dy, dx := c.rand(rows, cols), c.zeros(rows, cols)
	c.dev.ReluBackward(dx.d, dy.d, s.d)
	c.ref.ReluBackward(dx.r, dy.r, s.r)
	c.record("relu_backward", fmt.Sprintf("%dx%d", rows, cols), dx, 1, true)
	for _, p := range []float32{0, 0.5, 0.6, 1} {
		m := c.zeros(1000, 77)
		c.dev.DropoutMask(m.d, p, 99)
		c.ref.DropoutMask(m.r, p, 99)
		c.record("dropout_mask", fmt.Sprintf("1000x77 p=%g", p), m, 1, true)
		c.free(m)
	}
	a, bb, o := c.rand(rows, cols), c.rand(rows, cols), c.zeros(rows, cols)
	c.dev.Mul(o.d, a.d, bb.d)
	c.ref.Mul(o.r, a.r, bb.r)
	c.record("mul", fmt.Sprintf("%dx%d", rows, cols), o, 1, true)
	c.dev.Add(o.d, o.d, bb.d)
	c.ref.Add(o.r, o.r, bb.r)
	c.record("add", fmt.Sprintf("%dx%d", rows, cols), o, 1, true)
	c.dev.Axpy(-0.75, a.d, o.d)
	c.ref.Axpy(-0.75, a.r, o.r)
	c.record("axpy", fmt.Sprintf("%dx%d", rows, cols), o, 1, false)
	c.dev.Scale(3.5, o.d)
	c.ref.Scale(3.5, o.r)
	c.record("scale", fmt.Sprintf("%dx%d", rows, cols), o, 1, false)
	c.free(x, b, db, s, y, dy, dx, a, bb, o)
}

func (c *checker) loss() {
	for _, shape := range [][2]int{{37, 2}, {2000, 47}, {300, 200}} {
		rows, cols := shape[0], shape[1]
		l := c.rand(rows, cols)
		c.dev.Scale(8, l.d)
		c.ref.Scale(8, l.r)
		labels := make([]int32, rows)
		for i := range labels {
			labels[i] = int32(c.r.Intn(cols))
			if i%7 == 3 {
				labels[i] = -1
			}
		}
		g := c.zeros(rows, cols)
		ld, cd := c.dev.SoftmaxCrossEntropy(l.d, labels, g.d)
		lr, cr := c.ref.SoftmaxCrossEntropy(l.r, labels, g.r)
		sh := fmt.Sprintf("%dx%d", rows, cols)
		e := math.Abs(ld-lr) / (math.Abs(lr) + 1)
		c.out = append(c.out, Result{Op: "softmax_ce_loss", Shape: sh, MaxRelErr: e, OK: e <= Tolerance && cd == cr, Mismatches: abs(cd - cr)})
		c.record("softmax_ce_grad", sh, g, 1/float64(rows), false)
		ad, ar := make([]int32, rows), make([]int32, rows)
		c.dev.Argmax(ad, l.d)
		c.ref.Argmax(ar, l.r)
		mis := 0
		for i := range ad {
			if ad[i] != ar[i] {
				mis++
			}
		}
		c.out = append(c.out, Result{Op: "argmax", Shape: sh, Exact: true, Mismatches: mis, OK: mis == 0})
		c.free(l, g)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (c *checker) adam() {
	p, m, v := c.rand(300, 70), c.zeros(300, 70), c.zeros(300, 70)
	for step := 1; step <= 20; step++ {
		g := c.rand(300, 70)
		c.dev.Adam(p.d, g.d, m.d, v.d, step, 0.01, 0.9, 0.999, 1e-8, 5e-4)
		c.ref.Adam(p.r, g.r, m.r, v.r, step, 0.01, 0.9, 0.999, 1e-8, 5e-4)
		c.free(g)
	}
	c.record("adam", "300x70, 20 steps", p, 1, false)
	c.free(p, m, v)
}

func (c *checker) transfers() {
	n := 5<<20 + 3 // more than one 16 MiB staging buffer
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%1000) - 500
	}
	x := c.values(n, 1, v)
	y := c.zeros(n, 1)
	c.dev.Copy(y.d, x.d)
	c.ref.Copy(y.r, x.r)
	c.record("copy", fmt.Sprintf("%d floats", n), y, 1, true)
	c.dev.Zero(y.d)
	c.ref.Zero(y.r)
	c.record("zero", fmt.Sprintf("%d floats", n), y, 1, true)
	c.free(x, y)
}
