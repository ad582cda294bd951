package nn

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// refAct applies the float64 activation in place.
func refAct(act Activation, m mat) {
	for i, v := range m.v {
		switch {
		case v > 0:
		case act == ActELU:
			m.v[i] = math.Expm1(v)
		default:
			m.v[i] = 0
		}
	}
}

// refAnyLayer is the float64 reference of layer l of m (any kind).
func refAnyLayer(m *Model, l int, blk *graph.Block, x mat, ps []mat) mat {
	switch layer := m.Layers[l].(type) {
	case *PropConv:
		return refPropLayer(layer, blk, x, ps)
	case *GATConv:
		return refGAT(blk, x, ps, layer.Heads, layer.Concat, nil)
	}
	return refLayer(m.Spec.Kind, blk, x, ps)
}

// TestGASGradients checks ForwardGAS and BackwardGAS of every model kind
// against a float64 reference of a GNNAutoScale pass: every layer runs on
// the same block (in-batch destinations first, then the halo), and after
// each hidden layer the halo's rows of the next input are fixed historical
// embeddings (constants: no gradient reaches them), the in-batch rows the
// layer's output after its activation (APPNP and GCNII: [Z | X0] for
// in-batch rows, [history | 0] for the halo's). It checks the loss, the
// pushed embeddings and, by central finite differences on the reference,
// every parameter's gradient; then that an evaluation pass gives the same
// logits and that nothing stays allocated.
func TestGASGradients(t *testing.T) {
	cases := []struct {
		kind Kind
		act  Activation
	}{{"gcn", ""}, {"sage", ""}, {"gat", ActELU}, {"gat", ActReLU}, {"appnp", ""}, {"gcnii", ""}}
	for _, tc := range cases {
		t.Run(string(tc.kind)+string(tc.act), func(t *testing.T) {
			dev := cpu.New(2, 0)
			r := rng.New(21)
			const nd, ns, L = 6, 11, 3
			m, err := New(dev, Spec{Kind: tc.kind, In: 5, Hidden: 4, Out: 3, Layers: L, Heads: 2, Activation: tc.act, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			randomizeBiases(t, dev, r, m)
			blk := randBlock(r, nd, ns)
			if tc.kind == "gat" {
				blk = m.PrepareBlock(blk, nil, nil)
			}
			blocks := []*graph.Block{blk, blk, blk}
			// Histories of the halo rows, one per hidden layer.
			var hist []*tensor.Tensor
			var histM []mat
			for l := 0; l < L-1; l++ {
				h := randTensor(t, dev, r, ns-nd, m.EmbedDim(l))
				hist = append(hist, h)
				histM = append(histM, toMat(dev, h))
			}
			pushed := make([]mat, L-1)
			halo := func(l int, y *tensor.Tensor) (*tensor.Tensor, error) {
				if y.Rows != nd || y.Cols != m.EmbedDim(l) {
					t.Fatalf("layer %d pushes %s, want %dx%d", l, y.Shape(), nd, m.EmbedDim(l))
				}
				pushed[l] = toMat(dev, y)
				ext, err := dev.Alloc(ns, y.Cols)
				if err != nil {
					return nil, err
				}
				dev.Copy(ext.RowSlice(0, nd), y)
				dev.Copy(ext.RowSlice(nd, ns), hist[l])
				return ext, nil
			}
			x := randTensor(t, dev, r, ns, 5)
			labels := []int32{0, 2, 1, 2, 0, 1}
			c := &Context{Dev: dev, Train: true}
			logits, err := m.ForwardGAS(c, blocks, x, halo)
			if err != nil {
				t.Fatal(err)
			}
			grad, _ := dev.Alloc(logits.Rows, logits.Cols)
			loss, _ := dev.SoftmaxCrossEntropy(logits, labels, grad)
			if err := m.BackwardGAS(c, grad); err != nil {
				t.Fatal(err)
			}
			ps := modelMats(dev, m)
			xm := toMat(dev, x)
			_, self := m.Layers[0].(*PropConv)
			// forward returns the reference logits and each hidden layer's
			// in-batch embeddings.
			forward := func() (mat, []mat) {
				h := xm
				var embs []mat
				for l := range L {
					y := refAnyLayer(m, l, blk, h, ps[l])
					if l == L-1 {
						return y, embs
					}
					if !self {
						refAct(m.activation(), y)
					}
					e := m.EmbedDim(l)
					emb := newMat(nd, e)
					next := newMat(ns, y.c)
					for i := 0; i < nd; i++ {
						for j := 0; j < y.c; j++ {
							next.v[i*y.c+j] = y.at(i, j)
						}
						for j := 0; j < e; j++ {
							emb.v[i*e+j] = y.at(i, j)
						}
					}
					for i := nd; i < ns; i++ {
						for j := 0; j < e; j++ { // [history | 0] when y is wider
							next.v[i*y.c+j] = histM[l].at(i-nd, j)
						}
					}
					embs = append(embs, emb)
					h = next
				}
				panic("unreachable")
			}
			f := func() float64 { y, _ := forward(); return refCE(y, labels) }
			_, embs := forward()
			for l := range embs {
				checkClose(t, "pushed", pushed[l].v, embs[l].v, 1e-5)
			}
			checkModelGrads(t, dev, m, ps, loss, f, 2e-4, 1e-2)
			// Evaluation mode: the same logits, nothing kept.
			ev, err := m.ForwardGAS(&Context{Dev: dev}, blocks, x, halo)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, "eval logits", f32to64(ev, dev), f32to64(logits, dev), 1e-6)
			for _, tt := range append([]*tensor.Tensor{ev, logits, grad, x}, hist...) {
				dev.Free(tt)
			}
			m.Free(dev)
			checkNothingLive(t, dev)
		})
	}
}

// TestGASDropoutFrees runs GAS training passes with dropout for every kind
// and checks that backward frees everything and that dropout changes the
// logits (so it is applied).
func TestGASDropoutFrees(t *testing.T) {
	for _, kind := range Kinds {
		dev := cpu.New(1, 0)
		r := rng.New(8)
		m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 4, Out: 3, Layers: 2, Heads: 2, Dropout: 0.5, InputDropout: true, AttnDropout: 0.3, Activation: ActELU, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		blk := randBlock(r, 5, 9)
		if kind == "gat" {
			blk = m.PrepareBlock(blk, nil, nil)
		}
		halo := func(l int, y *tensor.Tensor) (*tensor.Tensor, error) {
			ext, err := dev.Alloc(9, y.Cols)
			if err == nil {
				dev.Copy(ext.RowSlice(0, 5), y)
			}
			return ext, err
		}
		x := randTensor(t, dev, r, 9, 5)
		before := dev.Mem().Stats().Live
		var outs []mat
		for step := range 2 {
			c := &Context{Dev: dev, Train: true, Seed: 1, Step: uint64(step)}
			y, err := m.ForwardGAS(c, []*graph.Block{blk, blk}, x, halo)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, toMat(dev, y))
			if err := m.BackwardGAS(c, y); err != nil {
				t.Fatal(err)
			}
			dev.Free(y)
		}
		if after := dev.Mem().Stats().Live; after != before {
			t.Fatalf("%s: GAS training passes leaked %d bytes", kind, after-before)
		}
		same := true
		for i := range outs[0].v {
			same = same && outs[0].v[i] == outs[1].v[i]
		}
		if same {
			t.Fatalf("%s: two steps with different dropout masks gave the same logits", kind)
		}
		dev.Free(x)
		m.Free(dev)
	}
}

// TestELU checks ELU and its derivative against math.Expm1 and central
// finite differences, and a model's training pass with ELU and dropout
// (which keeps the undropped activations for the derivative) against the
// float64 reference with the same masks.
func TestELU(t *testing.T) {
	dev := cpu.New(1, 0)
	r := rng.New(4)
	x := randTensor(t, dev, r, 7, 5)
	xm := toMat(dev, x)
	y, _ := dev.Alloc(7, 5)
	dev.Copy(y, x)
	elu(dev, y)
	want := xm.clone()
	refAct(ActELU, want)
	checkClose(t, "elu", f32to64(y, dev), want.v, 1e-6)
	dy := randTensor(t, dev, r, 7, 5)
	dx, _ := dev.Alloc(7, 5)
	eluBackward(dev, dx, dy, y)
	dym := toMat(dev, dy)
	num := numericGrad(xm.v, func() float64 {
		e := xm.clone()
		refAct(ActELU, e)
		s := 0.0
		for i := range e.v {
			s += e.v[i] * dym.v[i]
		}
		return s
	})
	checkClose(t, "elu backward", f32to64(dx, dev), num, 1e-5)
	for _, tt := range []*tensor.Tensor{x, y, dy, dx} {
		dev.Free(tt)
	}

	// A 3-layer GCN with ELU and dropout, through the loss.
	m, err := New(dev, Spec{Kind: "gcn", In: 5, Hidden: 6, Out: 3, Layers: 3, Dropout: 0.5, Activation: ActELU, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	randomizeBiases(t, dev, r, m)
	blocks := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 6, 9), randBlock(r, 4, 6)}
	in := randTensor(t, dev, r, 14, 5)
	labels := []int32{0, 2, 1, 2}
	c := &Context{Dev: dev, Train: true, Seed: 5, Step: 3}
	logits, err := m.Forward(c, blocks, in)
	if err != nil {
		t.Fatal(err)
	}
	masks := make([]mat, len(blocks))
	for l, mk := range m.masks {
		if l > 0 {
			masks[l] = toMat(dev, mk)
		}
	}
	grad, _ := dev.Alloc(logits.Rows, logits.Cols)
	loss, _ := dev.SoftmaxCrossEntropy(logits, labels, grad)
	if err := m.Backward(c, grad); err != nil {
		t.Fatal(err)
	}
	ps := modelMats(dev, m)
	inm := toMat(dev, in)
	f := func() float64 {
		h := inm
		for l, blk := range blocks {
			h = refLayer("gcn", blk, h, ps[l])
			if l < len(blocks)-1 {
				refAct(ActELU, h)
				for i := range h.v {
					h.v[i] *= masks[l+1].v[i]
				}
			}
		}
		return refCE(h, labels)
	}
	checkModelGrads(t, dev, m, ps, loss, f, 2e-4, 1e-3)
	for _, tt := range []*tensor.Tensor{logits, grad, in} {
		dev.Free(tt)
	}
	m.Free(dev)
	checkNothingLive(t, dev)
}
