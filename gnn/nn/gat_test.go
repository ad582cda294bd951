package nn

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// refGAT is the float64 GAT layer from parameters ps (W, att_src, att_dst,
// bias); mask (E×H, or nil) scales the attention coefficients.
func refGAT(blk *graph.Block, x mat, ps []mat, heads int, concat bool, mask []float32) mat {
	xw := matmul(x, ps[0])
	C := xw.c / heads
	score := func(att mat, j, h int) float64 {
		s := 0.0
		for c := 0; c < C; c++ {
			s += att.v[h*C+c] * xw.at(j, h*C+c)
		}
		return s
	}
	out := xw.c
	if !concat {
		out = C
	}
	y := newMat(blk.NumDst, out)
	for i := 0; i < blk.NumDst; i++ {
		lo, hi := blk.Indptr[i], blk.Indptr[i+1]
		for h := 0; h < heads; h++ {
			e := make([]float64, hi-lo)
			sum := 0.0
			for k := lo; k < hi; k++ {
				z := score(ps[1], int(blk.Indices[k]), h) + score(ps[2], i, h)
				if z < 0 {
					z *= 0.2
				}
				e[k-lo] = math.Exp(z)
				sum += e[k-lo]
			}
			for k := lo; k < hi; k++ {
				a := e[k-lo] / sum
				if mask != nil {
					a *= float64(mask[k*int64(heads)+int64(h)])
				}
				j := int(blk.Indices[k])
				for c := 0; c < C; c++ {
					if concat {
						y.add(i, h*C+c, a*xw.at(j, h*C+c))
					} else {
						y.add(i, c, a*xw.at(j, h*C+c)/float64(heads))
					}
				}
			}
		}
	}
	for i := 0; i < y.r; i++ {
		for j := 0; j < y.c; j++ {
			y.add(i, j, ps[3].v[j])
		}
	}
	return y
}

// checkCloseFloor is checkClose with a larger floor on the scale: an
// attention vector's gradient is exactly zero for a head whose logits share
// one sign on every row (the softmax then ignores the destination's score),
// where float32 leaves rounding noise.
func checkCloseFloor(t *testing.T, what string, analytic, numeric []float64, tol, floor float64) {
	t.Helper()
	scale := math.Max(maxAbs(numeric), floor)
	for i := range numeric {
		if d := math.Abs(analytic[i] - numeric[i]); d > tol*scale {
			t.Fatalf("%s[%d]: analytic %.6g, numeric %.6g (scale %.3g)", what, i, analytic[i], numeric[i], scale)
		}
	}
}

// TestGATLayerGradients checks GATConv's forward against the float64
// reference and every gradient (x, W, attention vectors, bias) against
// central finite differences, with concatenated and averaged heads, with
// and without attention dropout, on a block with an empty row, a duplicate
// edge and a self-loop.
func TestGATLayerGradients(t *testing.T) {
	cases := []struct {
		name          string
		in, ch, heads int
		concat        bool
		drop          float32
	}{
		{"concat", 5, 3, 2, true, 0},
		{"mean", 4, 3, 3, false, 0},
		{"single", 3, 4, 1, false, 0},
		{"dropout", 5, 2, 2, true, 0.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dev := cpu.New(2, 0)
			r := rng.New(uint64(tc.in), uint64(tc.heads))
			blk := randBlock(r, 6, 11)
			blk.Weights = nil
			layer, err := NewGATConv(dev, "l", tc.in, tc.ch, tc.heads, tc.concat, tc.drop, 7, r)
			if err != nil {
				t.Fatal(err)
			}
			b := randTensor(t, dev, r, 1, layer.Out)
			dev.Copy(layer.B.W, b)
			x := randTensor(t, dev, r, blk.NumSrc, tc.in)
			dy := randTensor(t, dev, r, blk.NumDst, layer.Out)
			c := &Context{Dev: dev, Train: true, Seed: 3, Step: 1}
			y, err := layer.Forward(c, blk, x)
			if err != nil {
				t.Fatal(err)
			}
			mask := layer.g.mask
			if (tc.drop > 0) != (mask != nil) {
				t.Fatalf("dropout %g but mask %v", tc.drop, mask != nil)
			}
			ps := paramMats(dev, layer.Params())
			xm, dym := toMat(dev, x), toMat(dev, dy)
			checkClose(t, "forward", f32to64(y, dev), refGAT(blk, xm, ps, tc.heads, tc.concat, mask).v, 1e-5)
			dx, err := layer.Backward(c, dy, true)
			if err != nil {
				t.Fatal(err)
			}
			loss := func() float64 { return dot(refGAT(blk, xm, ps, tc.heads, tc.concat, mask), dym) }
			checkClose(t, "dx", f32to64(dx, dev), numericGrad(xm.v, loss), 1e-4)
			for pi, p := range layer.Params() {
				checkCloseFloor(t, p.Name, f32to64(p.G, dev), numericGrad(ps[pi].v, loss), 1e-4, 1e-2)
			}
			dev.Free(y)
			dev.Free(dx)
			dev.Free(b)
			dev.Free(x)
			dev.Free(dy)
			for _, p := range layer.Params() {
				p.free(dev)
			}
			if live := dev.Mem().Stats().Live; live != 0 {
				t.Fatalf("%d bytes live after freeing everything", live)
			}
		})
	}
}

// TestEdgeSoftmax checks that coefficients are positive and sum to 1 over
// every non-empty destination row and head, that empty rows are untouched,
// and that large logits do not overflow.
func TestEdgeSoftmax(t *testing.T) {
	r := rng.New(9)
	blk := randBlock(r, 8, 12)
	const H = 3
	E := int(blk.NumEdges())
	logits := make([]float32, E*H)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 50)
	}
	alpha := make([]float32, len(logits))
	EdgeSoftmax(blk, logits, alpha, H)
	for i := 0; i < blk.NumDst; i++ {
		lo, hi := blk.Indptr[i], blk.Indptr[i+1]
		for h := 0; h < H; h++ {
			s := 0.0
			for e := lo; e < hi; e++ {
				a := alpha[e*H+int64(h)]
				if !(a >= 0) || math.IsInf(float64(a), 0) {
					t.Fatalf("row %d head %d: coefficient %g", i, h, a)
				}
				s += float64(a)
			}
			if lo < hi && math.Abs(s-1) > 1e-5 {
				t.Fatalf("row %d head %d sums to %g", i, h, s)
			}
		}
	}
	if blk.Indptr[2] != blk.Indptr[1] {
		t.Fatal("randBlock's row 1 should be empty")
	}
}

// TestGATEmptyRows checks that a destination without incoming edges gets
// just the bias and passes no gradient, and that an edgeless block works.
func TestGATEmptyRows(t *testing.T) {
	dev := cpu.New(1, 0)
	r := rng.New(4)
	layer, err := NewGATConv(dev, "l", 3, 2, 2, true, 0.6, 0, r)
	if err != nil {
		t.Fatal(err)
	}
	b := randTensor(t, dev, r, 1, layer.Out)
	dev.Copy(layer.B.W, b)
	blk := &graph.Block{NumDst: 2, NumSrc: 3, Indptr: []int64{0, 0, 0}}
	x := randTensor(t, dev, r, 3, 3)
	c := &Context{Dev: dev, Train: true}
	y, err := layer.Forward(c, blk, x)
	if err != nil {
		t.Fatal(err)
	}
	ym, bm := toMat(dev, y), toMat(dev, b)
	for i := 0; i < 2; i++ {
		for j := 0; j < layer.Out; j++ {
			if ym.at(i, j) != bm.v[j] {
				t.Fatalf("empty row %d col %d: %g, want bias %g", i, j, ym.at(i, j), bm.v[j])
			}
		}
	}
	dx, err := layer.Backward(c, y, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range toMat(dev, dx).v {
		if v != 0 {
			t.Fatalf("dx[%d] = %g on an edgeless block", i, v)
		}
	}
	if _, err := layer.Backward(c, y, true); err == nil {
		t.Fatal("second backward without forward succeeded")
	}
	if _, err := layer.Forward(c, blk, randTensor(t, dev, r, 2, 3)); err == nil {
		t.Fatal("forward accepted an input with the wrong number of rows")
	}
}

// TestGATModelGradients checks a 2-layer GAT model (hidden heads
// concatenated, one output head) through softmax cross-entropy, dropout
// off, on sampled-style blocks with self-loops added by PrepareBlock.
func TestGATModelGradients(t *testing.T) {
	dev := cpu.New(2, 0)
	r := rng.New(11)
	spec := Spec{Kind: "gat", In: 5, Hidden: 3, Heads: 2, Out: 3, Layers: 2, Seed: 1}
	m, err := New(dev, spec)
	if err != nil {
		t.Fatal(err)
	}
	if in, out := m.Layers[1].Dims(); in != 6 || out != 3 {
		t.Fatalf("output layer dims %d→%d, want 6→3", in, out)
	}
	var blocks []*graph.Block
	for _, b := range []*graph.Block{randBlock(r, 7, 12), randBlock(r, 4, 7)} {
		blocks = append(blocks, m.PrepareBlock(b, nil, nil))
	}
	for _, p := range m.Params() {
		if p.W.Rows == 1 && !p.Decay {
			b := randTensor(t, dev, r, 1, p.W.Cols)
			dev.Copy(p.W, b)
			dev.Free(b)
		}
	}
	x := randTensor(t, dev, r, 12, 5)
	labels := []int32{0, 2, 1, 2}
	c := &Context{Dev: dev, Train: true}
	logits, err := m.Forward(c, blocks, x)
	if err != nil {
		t.Fatal(err)
	}
	grad, _ := dev.Alloc(logits.Rows, logits.Cols)
	loss, _ := dev.SoftmaxCrossEntropy(logits, labels, grad)
	if err := m.Backward(c, grad); err != nil {
		t.Fatal(err)
	}
	ps := modelMats(dev, m)
	xm := toMat(dev, x)
	f := func() float64 {
		h := xm
		for l, blk := range blocks {
			g := m.Layers[l].(*GATConv)
			h = refGAT(blk, h, ps[l], g.Heads, g.Concat, nil)
			if l < len(blocks)-1 {
				for i := range h.v {
					h.v[i] = math.Max(h.v[i], 0)
				}
			}
		}
		return refCE(h, labels)
	}
	checkModelGrads(t, dev, m, ps, loss, f, 2e-4, 1e-2)
	// Layer-wise inference agrees with the model's evaluation forward.
	ec := &Context{Dev: dev}
	y, err := m.Forward(ec, blocks, x)
	if err != nil {
		t.Fatal(err)
	}
	h0, err := m.ForwardLayer(ec, 0, blocks[0], x)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := m.ForwardLayer(ec, 1, blocks[1], h0)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "layer-wise", f32to64(h1, dev), f32to64(y, dev), 1e-6)
	s, err := m.Snapshot(dev)
	if err != nil {
		t.Fatal(err)
	}
	ys, err := s.Forward(ec, blocks, x)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "snapshot", f32to64(ys, dev), f32to64(y, dev), 0)
	dev.Free(ys)
	s.Free(dev)
	dev.Free(y)
	dev.Free(h0)
	dev.Free(h1)
	dev.Free(logits)
	dev.Free(grad)
	dev.Free(x)
	m.Free(dev)
	checkNothingLive(t, dev)
}
