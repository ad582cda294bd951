package nn

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Activation names the function between message-passing layers
// (Spec.Activation).
type Activation string

// The activations.
const (
	// ActReLU is max(x, 0), the default.
	ActReLU Activation = "relu"
	// ActELU is x for x > 0, exp(x) - 1 otherwise (the GAT paper's and
	// GNNAutoScale's GAT activation).
	ActELU Activation = "elu"
)

// Activations lists the activations Spec.Activation accepts ("" is ReLU).
func Activations() []Activation { return []Activation{ActReLU, ActELU} }

// activation returns the model's activation between layers.
func (m *Model) activation() Activation {
	if m.Spec.Activation == "" {
		return ActReLU
	}
	return m.Spec.Activation
}

// activate applies the model's activation to y in place.
func (m *Model) activate(dev device.Device, y *tensor.Tensor) {
	if m.activation() == ActELU {
		elu(dev, y)
		return
	}
	dev.Relu(y, y)
}

// activateBackward sets dx = dy ⊙ f'(z) from the activation's output
// y = f(z) (before any dropout); dx may be dy.
func (m *Model) activateBackward(dev device.Device, dx, dy, y *tensor.Tensor) {
	if m.activation() == ActELU {
		eluBackward(dev, dx, dy, y)
		return
	}
	dev.ReluBackward(dx, dy, y)
}

// elu applies ELU (α = 1) to y in place. The device interface has no
// exponential, so it runs on a host copy, as GAT's edge computations do.
func elu(dev device.Device, y *tensor.Tensor) {
	h := hostOf(dev, y)
	for i, v := range h {
		if v < 0 {
			h[i] = float32(math.Expm1(float64(v)))
		}
	}
	dev.CopyFromHost(y, h)
}

// eluBackward sets dx = dy ⊙ ELU'(z) given y = ELU(z): 1 where y > 0, and
// exp(z) = y + 1 elsewhere.
func eluBackward(dev device.Device, dx, dy, y *tensor.Tensor) {
	if !tensor.SameShape(dy, y) || !tensor.SameShape(dx, y) {
		panic(fmt.Sprintf("nn: elu backward: dx %s, dy %s, y %s", dx.Shape(), dy.Shape(), y.Shape()))
	}
	g, hy := hostOf(dev, dy), hostOf(dev, y)
	for i, v := range hy {
		if v < 0 {
			g[i] *= v + 1
		}
	}
	dev.CopyFromHost(dx, g)
}
