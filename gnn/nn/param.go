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
	// Output marks the output layer's parameters (the last GCN, GraphSAGE
	// or GAT layer, APPNP's second linear, GCNII's output linear): see
	// Optimizer.OutWeightDecay.
	Output bool
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
// matching torch.optim.Adam with parameter groups: OutWeightDecay, when
// set, on the output layer's (GNNAutoScale's and Kipf & Welling's GCN
// leave it undecayed), else ConvWeightDecay on message-passing layers'
// and WeightDecay on the others (GCNII decays its convolutions and its
// linears differently). With ClipNorm > 0 the gradients are first scaled
// so that their global L2 norm is at most ClipNorm, as
// torch.nn.utils.clip_grad_norm_ does.
type Optimizer struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	ConvWeightDecay                    float32
	OutWeightDecay                     *float32
	ClipNorm                           float32
	step                               int
}

// NewAdam returns Adam with the usual betas (0.9, 0.999) and eps 1e-8 and
// one weight decay for every decayed parameter.
func NewAdam(lr, weightDecay float32) *Optimizer {
	return &Optimizer{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay, ConvWeightDecay: weightDecay}
}

// Steps returns the number of updates applied so far.
func (o *Optimizer) Steps() int { return o.step }

// decay returns p's weight decay.
func (o *Optimizer) decay(p *Param) float32 {
	switch {
	case !p.Decay:
		return 0
	case p.Output && o.OutWeightDecay != nil:
		return *o.OutWeightDecay
	case p.Conv:
		return o.ConvWeightDecay
	}
	return o.WeightDecay
}

// GradNorm returns the global L2 norm of the parameters' gradients.
func GradNorm(dev device.Device, params []*Param) float64 {
	var s float64
	for _, p := range params {
		for _, v := range hostOf(dev, p.G) {
			s += float64(v) * float64(v)
		}
	}
	return math.Sqrt(s)
}

// Step applies one update to every parameter from its gradient.
func (o *Optimizer) Step(dev device.Device, params []*Param) {
	o.step++
	if o.ClipNorm > 0 {
		if n := GradNorm(dev, params); n > float64(o.ClipNorm) {
			// torch adds 1e-6 to the norm.
			f := float32(float64(o.ClipNorm) / (n + 1e-6))
			for _, p := range params {
				dev.Scale(f, p.G)
			}
		}
	}
	for _, p := range params {
		wd := o.decay(p)
		dev.Adam(p.W, p.G, p.M, p.V, o.step, o.LR, o.Beta1, o.Beta2, o.Eps, wd)
	}
}

// newWeightBias allocates an in×out weight, Glorot-initialized and decayed,
// and a 1×out bias named name+".weight" and name+".bias".
func newWeightBias(dev device.Device, name string, in, out int, r *rng.Rand) (w, b *Param, err error) {
	w, err = newParam(dev, name+".weight", in, out, true)
	if err != nil {
		return nil, nil, err
	}
	b, err = newParam(dev, name+".bias", 1, out, false)
	if err != nil {
		w.free(dev)
		return nil, nil, err
	}
	glorot(dev, w, r)
	return w, b, nil
}
