package nn

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Param is a trainable tensor with its gradient and Adam moments.
type Param struct {
	Name  string
	W, G  *tensor.Tensor // value and gradient (same shape)
	M, V  *tensor.Tensor // Adam first and second moments
	Decay bool           // whether weight decay applies (weights yes, biases no)
	// Conv marks the weights of message-passing layers (GCN, GraphSAGE,
	// GAT, GCNII's convolutions), as opposed to dense ones (APPNP's MLP,
	// GCNII's input and output linears): see Optimizer.ConvWeightDecay.
	Conv bool
}

// Context carries what a forward or backward pass needs besides its inputs.
type Context struct {
	Dev   device.Device
	Train bool   // training mode: dropout on, activations kept for backward
	Seed  uint64 // base seed for dropout masks
	Step  uint64 // optimizer step, so each step draws fresh masks
}

// maskSeed derives the dropout seed for one site of one step.
func (c *Context) maskSeed(site int) uint64 { return rng.Mix(c.Seed, c.Step, uint64(site)) }

// newParam allocates a parameter, its gradient and moments on dev.
func newParam(dev device.Device, name string, rows, cols int, decay bool) (*Param, error) {
	p := &Param{Name: name, Decay: decay}
	for _, t := range []**tensor.Tensor{&p.W, &p.G, &p.M, &p.V} {
		x, err := dev.Alloc(rows, cols)
		if err != nil {
			p.free(dev)
			return nil, fmt.Errorf("allocate parameter %s: %w", name, err)
		}
		*t = x
	}
	return p, nil
}

func (p *Param) free(dev device.Device) {
	for _, t := range []*tensor.Tensor{p.W, p.G, p.M, p.V} {
		if t != nil {
			dev.Free(t)
		}
	}
}

// glorot fills p.W with Glorot-uniform values drawn from r.
func glorot(dev device.Device, p *Param, r *rng.Rand) {
	a := math.Sqrt(6 / float64(p.W.Rows+p.W.Cols))
	host := make([]float32, p.W.Len())
	for i := range host {
		host[i] = float32((2*r.Float64() - 1) * a)
	}
	dev.CopyFromHost(p.W, host)
}

// Optimizer is Adam with L2 weight decay on the parameters marked Decay,
// matching torch.optim.Adam: ConvWeightDecay on those also marked Conv,
// WeightDecay on the others (two parameter groups, as GCNII's training
// uses).
type Optimizer struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	ConvWeightDecay                    float32
	step                               int
}

// NewAdam returns Adam with the usual betas (0.9, 0.999) and eps 1e-8 and
// one weight decay for every decayed parameter.
func NewAdam(lr, weightDecay float32) *Optimizer {
	return &Optimizer{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay, ConvWeightDecay: weightDecay}
}

// Steps returns the number of updates applied so far.
func (o *Optimizer) Steps() int { return o.step }

// Step applies one update to every parameter from its gradient.
func (o *Optimizer) Step(dev device.Device, params []*Param) {
	o.step++
	for _, p := range params {
		wd := float32(0)
		switch {
		case p.Decay && p.Conv:
			wd = o.ConvWeightDecay
		case p.Decay:
			wd = o.WeightDecay
		}
		dev.Adam(p.W, p.G, p.M, p.V, o.step, o.LR, o.Beta1, o.Beta2, o.Eps, wd)
	}
}
