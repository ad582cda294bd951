package nn

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Linear is a dense layer Y = X W + b without message passing, used inside
// the propagation steps (APPNP's MLP, GCNII's input and output projections).
type Linear struct {
	In, Out int
	W, B    *Param
}

// NewLinear allocates a linear layer with Glorot-initialized weights.
func NewLinear(dev device.Device, name string, in, out int, r *rng.Rand) (*Linear, error) {
	w, b, err := newWeightBias(dev, name, in, out, r)
	if err != nil {
		return nil, err
	}
	return &Linear{In: in, Out: out, W: w, B: b}, nil
}

// forward sets y = x W + b.
func (l *Linear) forward(dev device.Device, x, y *tensor.Tensor) {
	dev.Gemm(false, false, 1, x, l.W.W, 0, y)
	dev.AddBias(y, l.B.W)
}

// backward sets the gradients from the forward input x and dy, and returns
// dx = dy Wᵀ (caller-owned) when needDX is set.
func (l *Linear) backward(dev device.Device, x, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	dev.SumRows(l.B.G, dy)
	dev.Gemm(true, false, 1, x, dy, 0, l.W.G)
	if !needDX {
		return nil, nil
	}
	dx, err := dev.Alloc(x.Rows, l.In)
	if err != nil {
		return nil, err
	}
	dev.Gemm(false, true, 1, dy, l.W.W, 0, dx)
	return dx, nil
}
