package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// HaloFunc builds the input of layer l+1 of a GNNAutoScale pass from y,
// layer l's in-batch output after its ReLU (before dropout; y.Rows ==
// blocks[l].NumDst). It returns a new tensor of blocks[l+1].NumSrc rows
// whose first y.Rows rows are a copy of y and whose other rows are the
// halo's historical embeddings. The halo rows are constants: no gradient
// flows into them. The model takes ownership of the result. HaloFunc is also
// where the caller pushes y into its history.
type HaloFunc func(l int, y *tensor.Tensor) (*tensor.Tensor, error)

// ForwardGAS is Forward for GNNAutoScale mini-batches: every block's
// destinations are the first NumDst of its sources (the in-batch nodes), the
// other sources being the halo. After each hidden layer's ReLU, halo extends
// the in-batch output with the halo's historical embeddings, and dropout
// applies to the whole extended input, as in GAS. x (caller-owned) holds
// blocks[0].NumSrc rows. It returns the logits of the last block's
// destinations, owned by the caller. In training mode the pass state is kept
// until BackwardGAS or Release.
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
	m.Release(c)
	m.inputs = make([]*tensor.Tensor, L)
	m.owned = make([]bool, L)
	m.masks = make([]*tensor.Tensor, L)
	m.acts = make([]*tensor.Tensor, L)
	dropout := c.Train && m.Spec.Dropout > 0
	drop := func(l int, h *tensor.Tensor, inPlace bool) (*tensor.Tensor, error) {
		mask, err := c.Dev.Alloc(h.Rows, h.Cols)
		if err != nil {
			return nil, err
		}
		out := h
		if !inPlace {
			if out, err = c.Dev.Alloc(h.Rows, h.Cols); err != nil {
				c.Dev.Free(mask)
				return nil, err
			}
		}
		c.Dev.DropoutMask(mask, m.Spec.Dropout, c.maskSeed(l))
		c.Dev.Mul(out, h, mask)
		m.masks[l] = mask
		return out, nil
	}
	h := x
	if dropout && m.Spec.InputDropout {
		hd, err := drop(0, x, false)
		if err != nil {
			m.Release(c)
			return nil, err
		}
		h, m.owned[0] = hd, true
	}
	for l, layer := range m.Layers {
		m.inputs[l] = h
		y, err := layer.Forward(c, blocks[l], h)
		if err != nil {
			m.Release(c)
			return nil, fmt.Errorf("layer %d: %w", l+1, err)
		}
		if !c.Train && l > 0 && m.owned[l] {
			c.Dev.Free(h)
			m.inputs[l], m.owned[l] = nil, false
		}
		if l == L-1 {
			h = y
			break
		}
		c.Dev.Relu(y, y)
		next, err := halo(l, y)
		if err != nil {
			c.Dev.Free(y)
			m.Release(c)
			return nil, fmt.Errorf("layer %d halo: %w", l+1, err)
		}
		if next.Rows != blocks[l+1].NumSrc || next.Cols != y.Cols {
			c.Dev.Free(y)
			c.Dev.Free(next)
			m.Release(c)
			return nil, fmt.Errorf("layer %d halo: got %s, want %dx%d", l+1, next.Shape(), blocks[l+1].NumSrc, y.Cols)
		}
		if c.Train {
			m.acts[l+1] = y // for the ReLU's backward
		} else {
			c.Dev.Free(y)
		}
		m.owned[l+1] = true
		m.inputs[l+1] = next
		if dropout {
			if _, err := drop(l+1, next, true); err != nil {
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

// BackwardGAS is Backward after ForwardGAS: the gradient of each hidden
// layer's extended input keeps only its in-batch rows (the halo's are
// dropped), then goes through dropout and ReLU into the previous layer. It
// sets every parameter's gradient and frees the pass state.
func (m *Model) BackwardGAS(c *Context, dlogits *tensor.Tensor) error {
	if len(m.inputs) != len(m.Layers) || len(m.acts) != len(m.Layers) {
		return fmt.Errorf("GAS backward without a GAS training forward")
	}
	defer m.Release(c)
	d := dlogits
	for l := len(m.Layers) - 1; l >= 0; l-- {
		dx, err := m.Layers[l].Backward(c, d, l > 0)
		if d != dlogits {
			c.Dev.Free(d)
		}
		if err != nil {
			return fmt.Errorf("layer %d backward: %w", l+1, err)
		}
		if l == 0 {
			break
		}
		if m.masks[l] != nil {
			c.Dev.Mul(dx, dx, m.masks[l])
		}
		act := m.acts[l]
		din, err := c.Dev.Alloc(act.Rows, act.Cols)
		if err != nil {
			c.Dev.Free(dx)
			return err
		}
		c.Dev.Copy(din, dx.RowSlice(0, act.Rows))
		c.Dev.Free(dx)
		c.Dev.ReluBackward(din, din, act)
		m.freeInput(c, l)
		d = din
	}
	return nil
}
