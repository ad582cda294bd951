package nn

import (
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// TestFromTransformed: a layer run from its inputs transformed first
// (Transform, then FromTransformed) gives the float64 reference's output,
// and Forward's up to float32 rounding, for GCN and GraphSAGE layers that
// transform first and for GAT; layers that aggregate first transform
// nothing.
func TestFromTransformed(t *testing.T) {
	cases := []struct {
		kind          Kind
		in, out       int
		heads         int
		concat        bool
		transformless bool
	}{
		{kind: KindGCN, in: 7, out: 3},
		{kind: KindSAGE, in: 7, out: 3},
		{kind: KindGCN, in: 3, out: 7, transformless: true},
		{kind: KindSAGE, in: 3, out: 3, transformless: true},
		{kind: KindGAT, in: 5, out: 3, heads: 2, concat: true},
		{kind: KindGAT, in: 4, out: 3, heads: 3},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			dev := cpu.New(2, 0)
			r := rng.New(uint64(tc.in), uint64(tc.out))
			blk := randBlock(r, 6, 11)
			var layer Layer
			var err error
			switch tc.kind {
			case KindGCN:
				layer, err = NewGCNConv(dev, "l", tc.in, tc.out, r)
			case KindSAGE:
				layer, err = NewSAGEConv(dev, "l", tc.in, tc.out, r)
			case KindGAT:
				blk.Weights = nil
				layer, err = NewGATConv(dev, "l", tc.in, tc.out, tc.heads, tc.concat, 0.5, 7, r)
			}
			if err != nil {
				t.Fatal(err)
			}
			ps := layer.Params()
			b := randTensor(t, dev, r, 1, ps[len(ps)-1].W.Cols)
			dev.Copy(ps[len(ps)-1].W, b)
			dev.Free(b)
			m := &Model{Spec: Spec{Kind: tc.kind}, Layers: []Layer{layer}}
			tr := m.Transformer(0)
			if tc.transformless {
				if tr != nil {
					t.Fatalf("%d→%d: transforms first", tc.in, tc.out)
				}
				return
			}
			x := randTensor(t, dev, r, blk.NumSrc, tc.in)
			tx, err := tr.Transform(&Context{Dev: dev}, x)
			if err != nil {
				t.Fatal(err)
			}
			var xd *tensor.Tensor
			if tr.UsesRoot() {
				xd = x.RowSlice(0, blk.NumDst)
			}
			got, err := m.FromTransformed(&Context{Dev: dev}, 0, blk, tx, xd)
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.ForwardLayer(&Context{Dev: dev, Train: true}, 0, blk, x)
			if err != nil {
				t.Fatal(err)
			}
			var ref mat
			if tc.kind == KindGAT {
				ref = refGAT(blk, toMat(dev, x), paramMats(dev, ps), tc.heads, tc.concat, nil)
			} else {
				ref = refLayer(tc.kind, blk, toMat(dev, x), paramMats(dev, ps))
			}
			checkCloseFloor(t, "from transformed vs float64", f32to64(got, dev), ref.v, 1e-5, 1e-5)
			checkCloseFloor(t, "from transformed vs forward", f32to64(got, dev), f32to64(want, dev), 1e-5, 1e-5)
			for _, u := range []*tensor.Tensor{x, tx, got, want} {
				dev.Free(u)
			}
			m.Free(dev)
			checkNothingLive(t, dev)
		})
	}
}
