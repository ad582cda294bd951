package cpu

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/rng/philox"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// elemGrain is the number of elements below which elementwise kernels run
// on one goroutine.
const elemGrain = minWork

// each runs fn over [0, n) in parallel ranges of elements.
func (d *Device) each(n int, fn func(lo, hi int)) { d.parallelFor(n, elemGrain, fn) }

// AddBias adds the 1×C row b to every row of x, in place.
func (d *Device) AddBias(x, b *tensor.Tensor) {
	if b.Rows != 1 || b.Cols != x.Cols {
		panic(fmt.Sprintf("cpu: AddBias: x %s, bias %s", x.Shape(), b.Shape()))
	}
	cols := x.Cols
	xd, bd := x.Data[:x.Len()], b.Data[:cols]
	d.parallelFor(x.Rows, grainRows(cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			addVec(bd, xd[i*cols:(i+1)*cols])
		}
	})
}

// reduceChunkRows is the fixed number of rows a reduction sums before
// combining partial results in chunk order; it does not depend on the
// thread count, so reductions are bit-identical for any number of threads.
const reduceChunkRows = 256

// SumRows sets db (1×C) to the column sums of dy. Sums are accumulated in
// float64 over fixed chunks of rows and combined in chunk order.
func (d *Device) SumRows(db, dy *tensor.Tensor) {
	if db.Rows != 1 || db.Cols != dy.Cols {
		panic(fmt.Sprintf("cpu: SumRows: db %s, dy %s", db.Shape(), dy.Shape()))
	}
	cols := dy.Cols
	nch := (dy.Rows + reduceChunkRows - 1) / reduceChunkRows
	part := make([]float64, nch*cols)
	yd := dy.Data[:dy.Len()]
	sum := func(c int) {
		p := part[c*cols : (c+1)*cols]
		for i := c * reduceChunkRows; i < min((c+1)*reduceChunkRows, dy.Rows); i++ {
			r := yd[i*cols : (i+1)*cols]
			p = p[:len(r)]
			for j, v := range r {
				p[j] += float64(v)
			}
		}
	}
	if dy.Len() < minWork {
		for c := 0; c < nch; c++ {
			sum(c)
		}
	} else {
		d.parallelChunks(nch, sum)
	}
	out := db.Data[:cols]
	for j := range out {
		var s float64
		for c := 0; c < nch; c++ {
			s += part[c*cols+j]
		}
		out[j] = float32(s)
	}
}

// Relu sets y = max(x, 0); y may be x. NaN inputs stay NaN.
func (d *Device) Relu(y, x *tensor.Tensor) {
	mustSame("Relu", y, x)
	xd, yd := x.Data[:x.Len()], y.Data[:y.Len()]
	d.each(len(xd), func(lo, hi int) {
		xs, ys := xd[lo:hi], yd[lo:hi]
		ys = ys[:len(xs)]
		// Branch-free: clear every bit of a value whose sign bit is set
		// (signs of activations are coin flips, a branch would mispredict).
		for i, v := range xs {
			b := math.Float32bits(v)
			ys[i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
		}
	})
}

// ReluBackward sets dx = dy where y > 0, else 0; dx may be dy.
func (d *Device) ReluBackward(dx, dy, y *tensor.Tensor) {
	mustSame("ReluBackward", dx, dy)
	mustSame("ReluBackward", dy, y)
	xd, gd, yd := dx.Data[:dx.Len()], dy.Data[:dy.Len()], y.Data[:y.Len()]
	d.each(len(xd), func(lo, hi int) {
		xs, gs, ys := xd[lo:hi], gd[lo:hi], yd[lo:hi]
		gs, ys = gs[:len(xs)], ys[:len(xs)]
		// Branch-free: keep the gradient where y's sign bit is clear and
		// y is not +0, i.e. where y > 0 (y comes out of Relu).
		for i := range xs {
			b := math.Float32bits(ys[i])
			m := ^uint32(int32(b)>>31) & uint32((-int64(b))>>63)
			xs[i] = math.Float32frombits(math.Float32bits(gs[i]) & m)
		}
	})
}

// DropoutMask fills mask with 0 (probability p) or 1/(1-p), drawn
// deterministically from seed, independently of the thread count and
// identically to the CUDA backend: element i (row-major) takes word i of
// the Philox4x32-10 stream of seed (philox.At) and is dropped when the
// word's top 24 bits u satisfy u/2^24 < p. p <= 0 gives all ones, p >= 1
// all zeros.
func (d *Device) DropoutMask(mask *tensor.Tensor, p float32, seed uint64) {
	md := mask.Data[:mask.Len()]
	if p <= 0 || p >= 1 {
		var v float32
		if p <= 0 {
			v = 1
		}
		d.each(len(md), func(lo, hi int) {
			for i := range md[lo:hi] {
				md[lo+i] = v
			}
		})
		return
	}
	keep := 1 / (1 - p)
	// Compare 24-bit integers: u < thresh exactly when u/2^24 < p.
	thresh := uint32(float64(p) * (1 << 24))
	if float32(thresh)/(1<<24) < p {
		thresh++
	}
	d.each(len(md), func(lo, hi int) { dropoutRange(md, lo, hi, seed, thresh, keep) })
}

// dropoutRange fills md[lo:hi] of a mask from the Philox blocks that cover
// it, two at a time (philox.Block2).
func dropoutRange(md []float32, lo, hi int, seed uint64, thresh uint32, keep float32) {
	key := philox.Key(seed)
	vals := [2]float32{keep, 0}
	b, end := lo/4, (hi+3)/4
	for ; b+2 <= end; b += 2 {
		wa, wb := philox.Block2(philox.Counter(uint64(b)), philox.Counter(uint64(b+1)), key)
		dropoutPut(md, lo, hi, 4*b, wa, thresh, &vals)
		dropoutPut(md, lo, hi, 4*b+4, wb, thresh, &vals)
	}
	if b < end {
		dropoutPut(md, lo, hi, 4*b, philox.Block(philox.Counter(uint64(b)), key), thresh, &vals)
	}
}

// dropoutPut sets the elements base..base+3 that lie in [lo, hi) from the
// words w. Branch-free: (u - thresh) has bit 31 set exactly when u <
// thresh (both are below 2^24), and that bit picks 0 from vals; a branch
// on a coin flip would mispredict half the time.
func dropoutPut(md []float32, lo, hi, base int, w [4]uint32, thresh uint32, vals *[2]float32) {
	if base >= lo && base+4 <= hi {
		m := md[base : base+4 : base+4]
		m[0] = vals[((w[0]>>8)-thresh)>>31&1]
		m[1] = vals[((w[1]>>8)-thresh)>>31&1]
		m[2] = vals[((w[2]>>8)-thresh)>>31&1]
		m[3] = vals[((w[3]>>8)-thresh)>>31&1]
		return
	}
	for i := max(base, lo); i < min(base+4, hi); i++ {
		md[i] = vals[((w[i-base]>>8)-thresh)>>31&1]
	}
}

// Mul sets dst = a ⊙ b elementwise; dst may alias a or b.
func (d *Device) Mul(dst, a, b *tensor.Tensor) {
	mustSame("Mul", dst, a)
	mustSame("Mul", a, b)
	od, ad, bd := dst.Data[:dst.Len()], a.Data[:a.Len()], b.Data[:b.Len()]
	d.each(len(od), func(lo, hi int) {
		os, as, bs := od[lo:hi], ad[lo:hi], bd[lo:hi]
		as, bs = as[:len(os)], bs[:len(os)]
		for i := range os {
			os[i] = as[i] * bs[i]
		}
	})
}

// Add sets dst = a + b elementwise; dst may alias a or b.
func (d *Device) Add(dst, a, b *tensor.Tensor) {
	mustSame("Add", dst, a)
	mustSame("Add", a, b)
	od, ad, bd := dst.Data[:dst.Len()], a.Data[:a.Len()], b.Data[:b.Len()]
	d.each(len(od), func(lo, hi int) {
		os, as, bs := od[lo:hi], ad[lo:hi], bd[lo:hi]
		as, bs = as[:len(os)], bs[:len(os)]
		for i := range os {
			os[i] = as[i] + bs[i]
		}
	})
}

// Axpy sets y += alpha*x.
func (d *Device) Axpy(alpha float32, x, y *tensor.Tensor) {
	mustSame("Axpy", x, y)
	xd, yd := x.Data[:x.Len()], y.Data[:y.Len()]
	d.each(len(xd), func(lo, hi int) { axpyVec(alpha, xd[lo:hi], yd[lo:hi]) })
}

// Scale sets x *= alpha.
func (d *Device) Scale(alpha float32, x *tensor.Tensor) {
	xd := x.Data[:x.Len()]
	d.each(len(xd), func(lo, hi int) { scaleVec(alpha, xd[lo:hi]) })
}
