package nn

import (
	"fmt"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// TestBackwardReadsTranspose checks BackwardReadsTranspose against what a
// training pass really does: on fresh blocks, after forward and backward,
// a block has a cached transpose only where the method said backward reads
// it (sampler workers build exactly those ahead of the step), and the
// first block of an aggregate-first GCN or SAGE has none.
func TestBackwardReadsTranspose(t *testing.T) {
	for _, kind := range Kinds {
		for _, in := range []int{5, 9} { // 5 <= hidden: aggregate first; 9 > hidden: transform first
			t.Run(fmt.Sprintf("%s/in%d", kind, in), func(t *testing.T) {
				dev := cpu.New(1, 0)
				r := rng.New(7)
				blocks := []*graph.Block{randBlock(r, 9, 14), randBlock(r, 6, 9), randBlock(r, 4, 6)}
				m, err := New(dev, Spec{Kind: kind, In: in, Hidden: 6, Out: 3, Layers: 3, Heads: 2, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				x := randTensor(t, dev, r, 14, in)
				c := &Context{Dev: dev, Train: true}
				logits, err := m.Forward(c, blocks, x)
				if err != nil {
					t.Fatal(err)
				}
				grad, _ := dev.Alloc(logits.Rows, logits.Cols)
				dev.SoftmaxCrossEntropy(logits, []int32{0, 2, 1, 2}, grad)
				if err := m.Backward(c, grad); err != nil {
					t.Fatal(err)
				}
				for l, b := range blocks {
					if b.HasTranspose() && !m.BackwardReadsTranspose(l) {
						t.Errorf("block %d: backward read its transpose, BackwardReadsTranspose said it would not", l)
					}
				}
				if (kind == KindGCN || kind == KindSAGE) && in <= 6 && (m.BackwardReadsTranspose(0) || blocks[0].HasTranspose()) {
					t.Errorf("aggregate-first first layer: reads %v, built %v; want neither", m.BackwardReadsTranspose(0), blocks[0].HasTranspose())
				}
				dev.Free(logits)
				dev.Free(grad)
				dev.Free(x)
			})
		}
	}
}
