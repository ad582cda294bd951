package nn

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// A float64 reference of the layers and models, written independently of the
// engine's kernels, used to check forward values and, by central finite
// differences, every backward pass.

type mat struct {
	r, c int
	v    []float64
}

func newMat(r, c int) mat             { return mat{r, c, make([]float64, r*c)} }
func (m mat) at(i, j int) float64     { return m.v[i*m.c+j] }
func (m mat) add(i, j int, x float64) { m.v[i*m.c+j] += x }
func (m mat) clone() mat              { return mat{m.r, m.c, append([]float64(nil), m.v...)} }

func matmul(a, b mat) mat {
	out := newMat(a.r, b.c)
	for i := 0; i < a.r; i++ {
		for k := 0; k < a.c; k++ {
			for j := 0; j < b.c; j++ {
				out.add(i, j, a.at(i, k)*b.at(k, j))
			}
		}
	}
	return out
}

// aggregate computes the block aggregation in float64.
func aggregate(blk *graph.Block, x mat, agg device.Agg) mat {
	out := newMat(blk.NumDst, x.c)
	for i := 0; i < blk.NumDst; i++ {
		k := float64(blk.Indptr[i+1] - blk.Indptr[i])
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			w := 1.0
			switch agg {
			case device.AggMean:
				w = 1 / k
			case device.AggWeighted:
				w = float64(blk.Weights[e])
			}
			for j := 0; j < x.c; j++ {
				out.add(i, j, w*x.at(int(blk.Indices[e]), j))
			}
		}
	}
	return out
}

// refLayer computes one layer in float64 from parameter matrices ps (in the
// order of Layer.Params).
func refLayer(kind Kind, blk *graph.Block, x mat, ps []mat) mat {
	var y mat
	switch kind {
	case "gcn":
		y = matmul(aggregate(blk, x, device.AggWeighted), ps[0])
	case "sage":
		y = matmul(aggregate(blk, x, device.AggMean), ps[0])
		xd := mat{blk.NumDst, x.c, x.v[:blk.NumDst*x.c]}
		r := matmul(xd, ps[1])
		for i := range y.v {
			y.v[i] += r.v[i]
		}
	}
	b := ps[len(ps)-1]
	for i := 0; i < y.r; i++ {
		for j := 0; j < y.c; j++ {
			y.add(i, j, b.v[j])
		}
	}
	return y
}

func toMat(dev device.Device, t *tensor.Tensor) mat {
	h := make([]float32, t.Len())
	dev.CopyToHost(h, t)
	m := newMat(t.Rows, t.Cols)
	for i, v := range h {
		m.v[i] = float64(v)
	}
	return m
}

func randTensor(t *testing.T, dev device.Device, r *rng.Rand, rows, cols int) *tensor.Tensor {
	t.Helper()
	x, err := dev.Alloc(rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	h := make([]float32, rows*cols)
	for i := range h {
		h[i] = float32(r.NormFloat64())
	}
	dev.CopyFromHost(x, h)
	return x
}

// randBlock makes a block with nd destinations and ns sources, including an
// empty row, a duplicate edge and a self-loop, GCN weights from random
// "global" degrees.
func randBlock(r *rng.Rand, nd, ns int) *graph.Block {
	b := &graph.Block{NumDst: nd, NumSrc: ns, Indptr: make([]int64, nd+1)}
	for i := 0; i < nd; i++ {
		k := r.Intn(5)
		if i == 1 {
			k = 0 // empty row
		}
		for e := 0; e < k; e++ {
			b.Indices = append(b.Indices, int32(r.Intn(ns)))
		}
		if i == 2 {
			b.Indices = append(b.Indices, 2, 2) // self-loop, duplicated
		}
		b.Indptr[i+1] = int64(len(b.Indices))
	}
	deg := make([]float32, ns)
	for j := range deg {
		deg[j] = float32(1 + r.Intn(10))
	}
	b.SetGCNWeightsGlobal(deg)
	return b
}

// numericGrad returns the central finite-difference gradient of f with
// respect to v (perturbed in place and restored), in float64.
func numericGrad(v []float64, f func() float64) []float64 {
	const h = 1e-6
	g := make([]float64, len(v))
	for i := range v {
		old := v[i]
		v[i] = old + h
		lp := f()
		v[i] = old - h
		lm := f()
		v[i] = old
		g[i] = (lp - lm) / (2 * h)
	}
	return g
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// checkClose compares analytic against numeric gradients relative to the
// numeric gradient's scale.
func checkClose(t *testing.T, what string, analytic, numeric []float64, tol float64) {
	t.Helper()
	checkCloseFloor(t, what, analytic, numeric, tol, 1e-3)
}

// paramMats returns the float64 copies of params' weights.
func paramMats(dev device.Device, params []*Param) []mat {
	var ps []mat
	for _, p := range params {
		ps = append(ps, toMat(dev, p.W))
	}
	return ps
}

// modelMats returns paramMats of every layer of m.
func modelMats(dev device.Device, m *Model) [][]mat {
	var ps [][]mat
	for _, layer := range m.Layers {
		ps = append(ps, paramMats(dev, layer.Params()))
	}
	return ps
}

// dot is the inner product <y, dy>, the scalar whose finite differences
// check a layer's backward.
func dot(y, dy mat) float64 {
	s := 0.0
	for i := range y.v {
		s += y.v[i] * dy.v[i]
	}
	return s
}

// checkModelGrads checks loss against the reference loss f and every
// parameter gradient of m against central finite differences of f over ps
// (modelMats of m), with checkCloseFloor's tol and floor.
func checkModelGrads(t *testing.T, dev device.Device, m *Model, ps [][]mat, loss float64, f func() float64, tol, floor float64) {
	t.Helper()
	if ref := f(); math.Abs(ref-loss) > 1e-5*math.Max(1, ref) {
		t.Fatalf("loss %.7g, reference %.7g", loss, ref)
	}
	for l, layer := range m.Layers {
		for pi, p := range layer.Params() {
			checkCloseFloor(t, p.Name, f32to64(p.G, dev), numericGrad(ps[l][pi].v, f), tol, floor)
		}
	}
}

// checkNothingLive fails when dev still holds allocations.
func checkNothingLive(t *testing.T, dev device.Device) {
	t.Helper()
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes still live after freeing everything", live)
	}
}

func f32to64(t *tensor.Tensor, dev device.Device) []float64 { return toMat(dev, t).v }

// checkLayerGradients runs layer forward and backward on blk with random
// input x and upstream gradient dy, and checks the output against ref (the
// float64 reference of the layer, given x and the parameters) and dx and
// every parameter gradient against central finite differences of
// L = <ref(x), dy>. It frees what it allocates.
func checkLayerGradients(t *testing.T, dev device.Device, r *rng.Rand, layer Layer, blk *graph.Block, ref func(x mat, ps []mat) mat) {
	t.Helper()
	in, out := layer.Dims()
	x := randTensor(t, dev, r, blk.NumSrc, in)
	dy := randTensor(t, dev, r, blk.NumDst, out)
	defer dev.Free(x)
	defer dev.Free(dy)
	c := &Context{Dev: dev, Train: true}
	y, err := layer.Forward(c, blk, x)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(y)
	ps := paramMats(dev, layer.Params())
	xm, dym := toMat(dev, x), toMat(dev, dy)
	checkClose(t, "forward", f32to64(y, dev), ref(xm, ps).v, 1e-5)
	dx, err := layer.Backward(c, dy, true)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(dx)
	loss := func() float64 { return dot(ref(xm, ps), dym) }
	checkClose(t, "dx", f32to64(dx, dev), numericGrad(xm.v, loss), 1e-4)
	for pi, p := range layer.Params() {
		checkClose(t, p.Name, f32to64(p.G, dev), numericGrad(ps[pi].v, loss), 1e-4)
	}
}

// TestLayerGradients checks every layer's forward against the float64
// reference and its backward against central finite differences of
// L = <layer(x), dy> computed on that reference.
func TestLayerGradients(t *testing.T) {
	for _, kind := range []Kind{KindGCN, KindSAGE} { // other kinds have their own tests
		for _, dims := range [][2]int{{7, 3}, {3, 7}, {5, 5}} { // both multiplication orders
			t.Run(string(kind), func(t *testing.T) {
				dev := cpu.New(2, 0)
				r := rng.New(uint64(dims[0]), uint64(dims[1]))
				blk := randBlock(r, 6, 11)
				var layer Layer
				var err error
				if kind == "gcn" {
					layer, err = NewGCNConv(dev, "l", dims[0], dims[1], r)
				} else {
					layer, err = NewSAGEConv(dev, "l", dims[0], dims[1], r)
				}
				if err != nil {
					t.Fatal(err)
				}
				// Nonzero biases so they are exercised.
				for _, p := range layer.Params() {
					if p.W.Rows == 1 {
						dev.Copy(p.W, randTensor(t, dev, r, 1, p.W.Cols))
					}
				}
				checkLayerGradients(t, dev, r, layer, blk, func(x mat, ps []mat) mat { return refLayer(kind, blk, x, ps) })
			})
		}
	}
}

// refModel is the float64 model: layers with ReLU between, no dropout,
// followed by mean softmax cross-entropy over the targets.
func refModel(kind Kind, blocks []*graph.Block, x mat, ps [][]mat, labels []int32) float64 {
	h := x
	for l, blk := range blocks {
		h = refLayer(kind, blk, h, ps[l])
		if l < len(blocks)-1 {
			for i := range h.v {
				h.v[i] = math.Max(h.v[i], 0)
			}
		}
	}
	return refCE(h, labels)
}

// refCE is the mean softmax cross-entropy of the rows of h.
func refCE(h mat, labels []int32) float64 {
	loss := 0.0
	for i := 0; i < h.r; i++ {
		mx := math.Inf(-1)
		for j := 0; j < h.c; j++ {
			mx = math.Max(mx, h.at(i, j))
		}
		s := 0.0
		for j := 0; j < h.c; j++ {
			s += math.Exp(h.at(i, j) - mx)
		}
		loss += -(h.at(i, int(labels[i])) - mx - math.Log(s))
	}
	return loss / float64(h.r)
}

// TestModelGradients checks a whole 3-layer model (sampled-style blocks with
// the targets-first prefix) end to end through the loss.
func TestModelGradients(t *testing.T) {
	for _, kind := range []Kind{KindGCN, KindSAGE} { // other kinds have their own tests
		t.Run(string(kind), func(t *testing.T) {
			dev := cpu.New(2, 0)
			r := rng.New(42)
			blocks := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 6, 9), randBlock(r, 4, 6)}
			m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 6, Out: 3, Layers: 3, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			// Nonzero biases: with zero biases an empty block row sits exactly
			// on ReLU's kink, where finite differences are meaningless.
			randomizeBiases(t, dev, r, m)
			x := randTensor(t, dev, r, 14, 5)
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
			f := func() float64 { return refModel(kind, blocks, xm, ps, labels) }
			checkModelGrads(t, dev, m, ps, loss, f, 2e-4, 1e-3)
			dev.Free(logits)
			dev.Free(grad)
			dev.Free(x)
			m.Free(dev)
			checkNothingLive(t, dev)
		})
	}
}

// TestEvalFreesEverything checks that an evaluation pass (with dropout
// configured, so masks would be allocated in training) leaves nothing live.
func TestEvalFreesEverything(t *testing.T) {
	dev := cpu.New(1, 0)
	r := rng.New(3)
	blocks := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 4, 9)}
	for _, kind := range Kinds {
		m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 6, Out: 3, Layers: 2, Dropout: 0.5, InputDropout: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		before := dev.Mem().Stats().Live
		x := randTensor(t, dev, r, 14, 5)
		y, err := m.Forward(&Context{Dev: dev}, blocks, x)
		if err != nil {
			t.Fatal(err)
		}
		dev.Free(y)
		dev.Free(x)
		if after := dev.Mem().Stats().Live; after != before {
			t.Fatalf("%s: eval forward leaked %d bytes", kind, after-before)
		}
		m.Free(dev)
	}
}

// TestSnapshot checks that a snapshot predicts exactly as the model did when
// it was taken, keeps doing so after the model trains on, and frees cleanly.
func TestSnapshot(t *testing.T) {
	for _, kind := range Kinds {
		dev := cpu.New(1, 0)
		r := rng.New(5)
		blocks := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 4, 9)}
		m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 6, Out: 3, Layers: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		x := randTensor(t, dev, r, 14, 5)
		ec := &Context{Dev: dev}
		y0, _ := m.Forward(ec, blocks, x)
		before := toMat(dev, y0)
		s, err := m.Snapshot(dev)
		if err != nil {
			t.Fatal(err)
		}
		// Train the model one step: the snapshot must not change.
		c := &Context{Dev: dev, Train: true}
		y, _ := m.Forward(c, blocks, x)
		g, _ := dev.Alloc(y.Rows, y.Cols)
		dev.SoftmaxCrossEntropy(y, []int32{0, 1, 2, 0}, g)
		if err := m.Backward(c, g); err != nil {
			t.Fatal(err)
		}
		NewAdam(0.1, 0).Step(dev, m.Params())
		ys, _ := s.Forward(ec, blocks, x)
		for i, v := range toMat(dev, ys).v {
			if v != before.v[i] {
				t.Fatalf("%s: snapshot output %d is %g, model gave %g when the snapshot was taken", kind, i, v, before.v[i])
			}
		}
		y1, _ := m.Forward(ec, blocks, x)
		if toMat(dev, y1).v[0] == before.v[0] {
			t.Fatalf("%s: the model did not change after a step (test is vacuous)", kind)
		}
		for _, tt := range []*tensor.Tensor{y0, y, g, ys, y1, x} {
			dev.Free(tt)
		}
		s.Free(dev)
		m.Free(dev)
		if live := dev.Mem().Stats().Live; live != 0 {
			t.Fatalf("%s: %d bytes live after freeing", kind, live)
		}
	}
}
