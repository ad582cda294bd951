package nn

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// refPropLayer is the float64 reference of one APPNP/GCNII propagation step
// l (only its configuration is read) with parameters ps in Params order.
func refPropLayer(l *PropConv, blk *graph.Block, x mat, ps []mat) mat {
	lin := func(x, w, b mat) mat {
		y := matmul(x, w)
		for i := 0; i < y.r; i++ {
			for j := 0; j < y.c; j++ {
				y.add(i, j, b.v[j])
			}
		}
		return y
	}
	relu := func(m mat) {
		for i := range m.v {
			m.v[i] = math.Max(m.v[i], 0)
		}
	}
	C, nd := l.C, blk.NumDst
	var h, x0 mat
	k := 0
	if l.First {
		cur := x
		for i := range l.Stem {
			cur = lin(cur, ps[k], ps[k+1])
			k += 2
			if i < len(l.Stem)-1 || l.StemReLU {
				relu(cur)
			}
		}
		h, x0 = cur, cur
	} else {
		h, x0 = newMat(x.r, C), newMat(x.r, C)
		for i := 0; i < x.r; i++ {
			for j := 0; j < C; j++ {
				h.add(i, j, x.at(i, j))
				x0.add(i, j, x.at(i, C+j))
			}
		}
	}
	a := float64(l.Alpha)
	p := aggregate(blk, h, device.AggWeighted)
	for i := 0; i < nd; i++ {
		for j := 0; j < C; j++ {
			p.v[i*C+j] = (1-a)*p.at(i, j) + a*x0.at(i, j)
		}
	}
	out := p
	if l.W != nil {
		b := float64(l.Beta)
		pw := matmul(p, ps[k])
		k++
		out = newMat(nd, C)
		for i := range out.v {
			out.v[i] = (1-b)*p.v[i] + b*pw.v[i]
		}
	}
	if l.ReLU {
		relu(out)
	}
	if l.Last {
		if l.Head != nil {
			return lin(out, ps[k], ps[k+1])
		}
		return out
	}
	y := newMat(nd, 2*C)
	for i := 0; i < nd; i++ {
		for j := 0; j < C; j++ {
			y.add(i, j, out.at(i, j))
			y.add(i, C+j, x0.at(i, j))
		}
	}
	return y
}

func randomizeBiases(t *testing.T, dev device.Device, r *rng.Rand, m *Model) {
	for _, p := range m.Params() {
		if p.W.Rows == 1 {
			b := randTensor(t, dev, r, 1, p.W.Cols)
			dev.Copy(p.W, b)
			dev.Free(b)
		}
	}
}

// TestPropLayerGradients checks every APPNP/GCNII step (first, middle,
// last) against the float64 reference, and its backward against central
// finite differences of <layer(x), dy>.
func TestPropLayerGradients(t *testing.T) {
	for _, kind := range []Kind{KindAPPNP, KindGCNII} {
		t.Run(string(kind), func(t *testing.T) {
			dev := cpu.New(2, 0)
			r := rng.New(7)
			m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 6, Out: 3, Layers: 3, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			randomizeBiases(t, dev, r, m)
			for li, layer := range m.Layers {
				pl := layer.(*PropConv)
				blk := randBlock(r, 6, 11)
				checkLayerGradients(t, dev, r, layer, blk, func(x mat, ps []mat) mat { return refPropLayer(pl, blk, x, ps) })
				if li == 0 && len(layer.Params()) == 0 {
					t.Fatal("first layer has no parameters")
				}
			}
			m.Free(dev)
			checkNothingLive(t, dev)
		})
	}
}

// TestPropModelGradients checks whole APPNP and GCNII models (sampled-style
// blocks with the targets-first prefix) end to end through the loss, and
// that layer-wise inference (ForwardLayer step by step) matches the
// evaluation forward.
func TestPropModelGradients(t *testing.T) {
	for _, kind := range []Kind{KindAPPNP, KindGCNII} {
		for _, L := range []int{1, 3} {
			t.Run(string(kind), func(t *testing.T) {
				dev := cpu.New(2, 0)
				r := rng.New(42)
				all := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 6, 9), randBlock(r, 4, 6)}
				blocks := all[3-L:]
				m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 6, Out: 3, Layers: L, Dropout: 0.5, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				randomizeBiases(t, dev, r, m)
				x := randTensor(t, dev, r, blocks[0].NumSrc, 5)
				labels := []int32{0, 2, 1, 2}
				// Evaluation (no dropout) gives the reference's loss and
				// matches layer-wise inference.
				ec := &Context{Dev: dev}
				logits, err := m.Forward(ec, blocks, x)
				if err != nil {
					t.Fatal(err)
				}
				h := x
				for l, blk := range blocks {
					y, err := m.ForwardLayer(ec, l, blk, h)
					if err != nil {
						t.Fatal(err)
					}
					if h != x {
						dev.Free(h)
					}
					h = y
				}
				checkClose(t, "layer-wise", f32to64(h, dev), f32to64(logits, dev), 1e-6)
				dev.Free(h)
				dev.Free(logits)
				// Gradients without dropout.
				m.Spec.Dropout = 0
				for _, layer := range m.Layers {
					layer.(*PropConv).Dropout = 0
				}
				c := &Context{Dev: dev, Train: true}
				logits, err = m.Forward(c, blocks, x)
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
						h = refPropLayer(m.Layers[l].(*PropConv), blk, h, ps[l])
					}
					return refCE(h, labels)
				}
				checkModelGrads(t, dev, m, ps, loss, f, 2e-4, 1e-3)
				// A training pass with dropout runs and frees everything.
				m.Spec.Dropout = 0.5
				for _, layer := range m.Layers {
					layer.(*PropConv).Dropout = 0.5
				}
				dev.Free(logits)
				logits, err = m.Forward(c, blocks, x)
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Backward(c, grad); err != nil {
					t.Fatal(err)
				}
				dev.Free(logits)
				dev.Free(grad)
				dev.Free(x)
				m.Free(dev)
				checkNothingLive(t, dev)
			})
		}
	}
}
