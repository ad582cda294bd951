package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// HaloFunc builds the input of layer l+1 of a GNNAutoScale pass from y,
// layer l's in-batch node embeddings: its output after the activation
// (before dropout), y.Rows == blocks[l].NumDst and y.Cols == EmbedDim(l).
// It returns a new tensor of blocks[l+1].NumSrc rows and y.Cols columns
// whose first y.Rows rows are a copy of y and whose other rows are the
// halo's historical embeddings. The halo rows are constants: no gradient
// flows into them. The model takes ownership of the result. HaloFunc is also
// where the caller pushes y into its history.
type HaloFunc func(l int, y *tensor.Tensor) (*tensor.Tensor, error)

// EmbedDim returns the width of the node embeddings layer l outputs: what a
// GNNAutoScale history of layer l holds. It is the layer's output width,
// except for APPNP's and GCNII's propagation steps before the last, whose
// output rows [Z | X0] also carry the destination's initial embedding X0:
// only in-batch nodes read their X0, so histories hold Z alone.
func (m *Model) EmbedDim(l int) int {
	_, out := m.Layers[l].Dims()
	if p, ok := m.Layers[l].(*PropConv); ok && !p.Last {
		return p.C
	}
	return out
}

// ForwardGAS is Forward for GNNAutoScale mini-batches: every block's
// destinations are the first NumDst of its sources (the in-batch nodes), the
// other sources being the halo. After each hidden layer (and its
// activation), halo extends the in-batch embeddings with the halo's
// historical ones, and dropout applies to the whole extended input, as in
// GAS. For APPNP and GCNII the extended rows carry the in-batch nodes' X0
// (computed exactly from their features by the first step) and zeros for
// the halo's, which no step reads. x (caller-owned) holds blocks[0].NumSrc
// rows. It returns the logits of the last block's destinations, owned by the
// caller. In training mode the pass state is kept until BackwardGAS or
// Release.
func (m *Model) ForwardGAS(c *Context, blocks []*graph.Block, x *tensor.Tensor, halo HaloFunc) (*tensor.Tensor, error) {
	L := len(m.Layers)
	if len(blocks) != L {
		return nil, fmt.Errorf("model has %d layers but got %d blocks", L, len(blocks))
	}
	for l := 0; l+1 < L; l++ {
		if blocks[l+1].NumSrc < blocks[l].NumDst {
			return nil, fmt.Errorf("layer %d: %d sources cannot hold the previous layer's %d destinations", l+2, blocks[l+1].NumSrc, blocks[l].NumDst)
		}
	}
	if halo == nil && L > 1 {
		return nil, fmt.Errorf("GAS forward without a halo function")
	}
	self := m.selfActivated()
	dropout := c.Train && m.Spec.Dropout > 0 && !self
	h, err := m.begin(c, x, dropout)
	if err != nil {
		return nil, err
	}
	m.dsts = make([]int, L)
	for l, b := range blocks {
		m.dsts[l] = b.NumDst
	}
	for l := range m.Layers {
		y, err := m.forwardLayer(c, l, blocks[l], h)
		if err != nil {
			return nil, err
		}
		if l == L-1 {
			h = y
			break
		}
		if !self {
			m.activate(c.Dev, y)
		}
		next, err := m.extend(c.Dev, l, y, blocks[l+1].NumSrc, halo)
		if err != nil {
			c.Dev.Free(y)
			m.Release(c)
			return nil, fmt.Errorf("layer %d halo: %w", l+1, err)
		}
		if c.Train && !self {
			m.acts[l+1] = y // for the activation's backward
		} else {
			c.Dev.Free(y)
		}
		m.owned[l+1] = true
		m.inputs[l+1] = next
		if dropout {
			if _, err := m.drop(c, l+1, next, true); err != nil {
				m.Release(c)
				return nil, err
			}
		}
		h = next
	}
	if !c.Train {
		m.Release(c)
	}
	return h, nil
}

// extend returns layer l+1's input (ns rows) from layer l's in-batch output
// y through halo. When y's rows carry more than the embedding ([Z | X0]),
// only Z goes through halo; the in-batch rows keep their X0 and the halo's
// rows get zeros in its place.
func (m *Model) extend(dev device.Device, l int, y *tensor.Tensor, ns int, halo HaloFunc) (*tensor.Tensor, error) {
	e := m.EmbedDim(l)
	if e == y.Cols {
		next, err := halo(l, y)
		if err != nil {
			return nil, err
		}
		if next.Rows != ns || next.Cols != y.Cols {
			dev.Free(next)
			return nil, fmt.Errorf("got %s, want %dx%d", next.Shape(), ns, y.Cols)
		}
		return next, nil
	}
	if y.Cols != 2*e {
		return nil, fmt.Errorf("layer output %s carries %d embedding columns: want twice as many", y.Shape(), e)
	}
	nd := y.Rows
	z, err := dev.Alloc(nd, e)
	if err != nil {
		return nil, err
	}
	dev.Gather(z, halves(y), halfRows(nd, 0))
	ext, err := halo(l, z)
	dev.Free(z)
	if err != nil {
		return nil, err
	}
	defer dev.Free(ext)
	if ext.Rows != ns || ext.Cols != e {
		return nil, fmt.Errorf("got %s, want %dx%d", ext.Shape(), ns, e)
	}
	next, err := dev.Alloc(ns, y.Cols) // zero-filled
	if err != nil {
		return nil, err
	}
	dev.Copy(next.RowSlice(0, nd), y)
	if ns > nd {
		dev.ScatterAdd(halves(next.RowSlice(nd, ns)), ext.RowSlice(nd, ns), halfRows(ns-nd, 0))
	}
	return next, nil
}

// BackwardGAS is Backward after ForwardGAS: the gradient of each hidden
// layer's extended input keeps only its in-batch rows (the halo's are
// dropped), then goes through dropout and the activation into the previous
// layer. It sets every parameter's gradient and frees the pass state.
func (m *Model) BackwardGAS(c *Context, dlogits *tensor.Tensor) error {
	if len(m.inputs) != len(m.Layers) || len(m.acts) != len(m.Layers) || len(m.dsts) != len(m.Layers) {
		return fmt.Errorf("GAS backward without a GAS training forward")
	}
	defer m.Release(c)
	self := m.selfActivated()
	d := dlogits
	for l := len(m.Layers) - 1; l >= 0; l-- {
		dx, err := m.backwardLayer(c, l, d, dlogits)
		if err != nil {
			return err
		}
		if l == 0 {
			break
		}
		nd := m.dsts[l-1] // the in-batch rows of the extended input
		din, err := c.Dev.Alloc(nd, dx.Cols)
		if err != nil {
			c.Dev.Free(dx)
			return err
		}
		c.Dev.Copy(din, dx.RowSlice(0, nd))
		c.Dev.Free(dx)
		if !self {
			m.activateBackward(c.Dev, din, din, m.acts[l])
		}
		m.freeInput(c, l)
		d = din
	}
	return nil
}
