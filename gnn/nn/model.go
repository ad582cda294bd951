package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/internal/enum"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Spec describes a model: its kind, widths and regularization.
type Spec struct {
	Kind   Kind // one of Kinds
	In     int  // input feature width
	Hidden int  // hidden width
	Out    int  // number of classes
	Layers int  // number of message-passing layers (>= 1)
	// Dropout is applied after every hidden layer's ReLU, and to the input
	// when InputDropout is set (as in Kipf & Welling's GCN).
	Dropout      float32
	InputDropout bool
	Seed         uint64 // initialization seed
	// Heads is GAT's number of attention heads in hidden layers (0 means
	// 1); Hidden is then the width of one head. The output layer has one.
	Heads int
	// AttnDropout is GAT's dropout on attention coefficients.
	AttnDropout float32
	// Alpha is APPNP's and GCNII's teleport weight α (0 means
	// DefaultAlpha); Theta is GCNII's λ (0 means DefaultTheta).
	Alpha, Theta float32
	// Activation is applied after every hidden layer of GCN, GraphSAGE and
	// GAT: ActReLU (also "") or ActELU. APPNP's and GCNII's steps apply
	// their own ReLU.
	Activation Activation
}

// Kind names a model architecture (Spec.Kind).
type Kind string

// The model kinds.
const (
	KindGCN   Kind = "gcn"   // graph convolution (Kipf & Welling)
	KindSAGE  Kind = "sage"  // GraphSAGE, mean aggregation
	KindGAT   Kind = "gat"   // graph attention
	KindAPPNP Kind = "appnp" // an MLP followed by personalized-PageRank propagation
	KindGCNII Kind = "gcnii" // deep GCN with initial residual and identity mapping
)

// Kinds lists the model kinds New accepts.
var Kinds = []Kind{KindGCN, KindSAGE, KindGAT, KindAPPNP, KindGCNII}

// KindNames returns the names of Kinds, in order.
func KindNames() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}

// Validate reports an impossible spec.
func (s Spec) Validate() error {
	switch {
	case !slices.Contains(Kinds, s.Kind):
		return fmt.Errorf("unknown model %q (choose %s)", s.Kind, strings.Join(KindNames(), ", "))
	case s.Layers < 1:
		return fmt.Errorf("model needs at least 1 layer, got %d", s.Layers)
	case s.In < 1 || s.Out < 1:
		return fmt.Errorf("model needs positive input and output widths, got %d and %d", s.In, s.Out)
	case s.Layers > 1 && s.Hidden < 1:
		return fmt.Errorf("hidden width must be positive, got %d", s.Hidden)
	case s.Dropout < 0 || s.Dropout >= 1:
		return fmt.Errorf("dropout must be in [0, 1), got %g", s.Dropout)
	case s.Heads < 0:
		return fmt.Errorf("heads must be non-negative, got %d", s.Heads)
	case s.AttnDropout < 0 || s.AttnDropout >= 1:
		return fmt.Errorf("attention dropout must be in [0, 1), got %g", s.AttnDropout)
	case s.Activation != "" && !slices.Contains(Activations(), s.Activation):
		return fmt.Errorf("unknown activation %q (choose %s)", s.Activation, enum.Join(Activations(), ", "))
	}
	_, err := s.paramCount() // refuses sizes that overflow
	return err
}

// Model is a stack of message-passing layers with an activation (ReLU or
// ELU) and dropout between them. One forward/backward pair may be in flight
// at a time.
type Model struct {
	Spec   Spec
	Layers []Layer

	inputs []*tensor.Tensor // input of each layer in the current pass
	owned  []bool           // whether inputs[l] belongs to the model
	masks  []*tensor.Tensor // dropout mask applied to inputs[l], or nil
	// acts[l] is layer l-1's activation output before dropout (owned) when
	// inputs[l] is not it: under GAS (inputs[l] adds the halo) and for ELU
	// with dropout (ELU's derivative needs the undropped output); else nil.
	acts []*tensor.Tensor
	dsts []int // GAS: each block's destinations (in-batch rows)
}

// New allocates a model on dev with weights drawn from spec.Seed.
func New(dev device.Device, spec Spec) (*Model, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	r := rng.New(spec.Seed, 0x6d6f64656c)
	m := &Model{Spec: spec}
	switch spec.Kind {
	case KindAPPNP, KindGCNII: // propagation steps: see newAPPNP, newGCNII
		build := newAPPNP
		if spec.Kind == KindGCNII {
			build = newGCNII
		}
		layers, err := build(dev, spec, r)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", spec.Kind, err)
		}
		m.Layers = layers
		return m, nil
	}
	for l := 0; l < spec.Layers; l++ {
		in, out := spec.Hidden, spec.Hidden
		if l > 0 && spec.Kind == KindGAT {
			in = spec.Hidden * max(spec.Heads, 1)
		}
		if l == 0 {
			in = spec.In
		}
		if l == spec.Layers-1 {
			out = spec.Out
		}
		name := fmt.Sprintf("conv%d", l+1)
		var layer Layer
		var err error
		switch spec.Kind {
		case KindGCN:
			layer, err = NewGCNConv(dev, name, in, out, r)
		case KindSAGE:
			layer, err = NewSAGEConv(dev, name, in, out, r)
		case KindGAT:
			if l < spec.Layers-1 {
				layer, err = NewGATConv(dev, name, in, out, max(spec.Heads, 1), true, spec.AttnDropout, gatSite+l, r)
			} else {
				layer, err = NewGATConv(dev, name, in, out, 1, false, spec.AttnDropout, gatSite+l, r)
			}
		}
		if err != nil {
			m.Free(dev)
			return nil, fmt.Errorf("build %s: %w", spec.Kind, err)
		}
		m.Layers = append(m.Layers, layer)
	}
	for _, p := range m.Layers[len(m.Layers)-1].Params() {
		p.Output = true
	}
	return m, nil
}

// Params returns every trainable parameter.
func (m *Model) Params() []*Param {
	var ps []*Param
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// ParamBytes returns the bytes held by parameters, gradients and moments.
func (m *Model) ParamBytes() int64 {
	var b int64
	for _, p := range m.Params() {
		b += 4 * p.W.Bytes()
	}
	return b
}

// Free releases the model's parameters and any pass state.
func (m *Model) Free(dev device.Device) {
	m.Release(&Context{Dev: dev})
	for _, p := range m.Params() {
		p.free(dev)
	}
	m.Layers = nil
}

// Forward runs every layer over blocks (outermost first) from the input
// rows x (caller-owned, NumSrc of blocks[0] rows) and returns the logits of
// the last block's destinations; the caller owns and frees them. In training
// mode the pass state is kept until Backward or Release.
func (m *Model) Forward(c *Context, blocks []*graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if len(blocks) != len(m.Layers) {
		return nil, fmt.Errorf("model has %d layers but got %d blocks", len(m.Layers), len(blocks))
	}
	L := len(m.Layers)
	dropout := c.Train && m.Spec.Dropout > 0 && !m.selfActivated()
	h, err := m.begin(c, x, dropout)
	if err != nil {
		return nil, err
	}
	for l := range m.Layers {
		y, err := m.forwardLayer(c, l, blocks[l], h)
		if err != nil {
			return nil, err
		}
		if l < L-1 {
			if !m.selfActivated() {
				m.activate(c.Dev, y)
			}
			if dropout {
				mask, err := c.Dev.Alloc(y.Rows, y.Cols)
				if err != nil {
					c.Dev.Free(y)
					m.Release(c)
					return nil, err
				}
				c.Dev.DropoutMask(mask, m.Spec.Dropout, c.maskSeed(l+1))
				m.masks[l+1] = mask
				if m.activation() != ActReLU {
					// Keep the activation's output for its derivative.
					yd, err := c.Dev.Alloc(y.Rows, y.Cols)
					if err != nil {
						c.Dev.Free(y)
						m.Release(c)
						return nil, err
					}
					m.acts[l+1] = y
					y = yd
				}
				c.Dev.Mul(y, m.actOr(l+1, y), mask)
			}
			m.owned[l+1] = true
		}
		h = y
	}
	if !c.Train {
		m.Release(c)
	}
	return h, nil
}

// begin starts a pass of Forward or ForwardGAS: it releases the previous
// pass's state, makes room for this one's, and returns the first layer's
// input: x, or with dropout and InputDropout, x through a dropout mask
// (layer 0's, which the model then owns).
func (m *Model) begin(c *Context, x *tensor.Tensor, dropout bool) (*tensor.Tensor, error) {
	m.Release(c)
	L := len(m.Layers)
	m.inputs = make([]*tensor.Tensor, L)
	m.owned = make([]bool, L)
	m.masks = make([]*tensor.Tensor, L)
	m.acts = make([]*tensor.Tensor, L)
	if !dropout || !m.Spec.InputDropout {
		return x, nil
	}
	hd, err := m.drop(c, 0, x, false)
	if err != nil {
		m.Release(c)
		return nil, err
	}
	m.owned[0] = true
	return hd, nil
}

// drop applies a fresh dropout mask, kept as layer l's, to h: in place, or
// into a new tensor.
func (m *Model) drop(c *Context, l int, h *tensor.Tensor, inPlace bool) (*tensor.Tensor, error) {
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

// forwardLayer runs layer l over block b from its input h, which the pass
// state keeps (in training mode; out of it, an input the model owns is
// freed at once). On an error it releases the pass.
func (m *Model) forwardLayer(c *Context, l int, b *graph.Block, h *tensor.Tensor) (*tensor.Tensor, error) {
	m.inputs[l] = h
	y, err := m.Layers[l].Forward(c, b, h)
	if err != nil {
		m.Release(c)
		return nil, fmt.Errorf("layer %d: %w", l+1, err)
	}
	if !c.Train && l > 0 && m.owned[l] {
		c.Dev.Free(h)
		m.inputs[l], m.owned[l] = nil, false
	}
	return y, nil
}

// Backward propagates dlogits (the gradient of the loss with respect to
// Forward's output; caller-owned) through the layers, setting every
// parameter's gradient, and frees the pass state.
func (m *Model) Backward(c *Context, dlogits *tensor.Tensor) error {
	if len(m.inputs) != len(m.Layers) {
		return fmt.Errorf("backward without a training forward")
	}
	defer m.Release(c)
	d := dlogits
	for l := len(m.Layers) - 1; l >= 0; l-- {
		dx, err := m.backwardLayer(c, l, d, dlogits)
		if err != nil {
			return err
		}
		if l > 0 {
			// inputs[l] = dropout(f(z)): through the mask (backwardLayer),
			// then f. (ReLU's derivative reads the dropped output: where
			// it is zero, the mask already zeroed the gradient.)
			if !m.selfActivated() {
				m.activateBackward(c.Dev, dx, dx, m.actOr(l, m.inputs[l]))
			}
			m.freeInput(c, l)
		}
		d = dx
	}
	return nil
}

// backwardLayer runs layer l's backward from d, the gradient of its
// output (freed unless it is the caller's dlogits), and returns the
// gradient of its input through layer l's dropout mask, if any (nothing
// at layer 0, whose input needs none).
func (m *Model) backwardLayer(c *Context, l int, d, dlogits *tensor.Tensor) (*tensor.Tensor, error) {
	dx, err := m.Layers[l].Backward(c, d, l > 0)
	if d != dlogits {
		c.Dev.Free(d)
	}
	if err != nil {
		return nil, fmt.Errorf("layer %d backward: %w", l+1, err)
	}
	if l > 0 && m.masks[l] != nil {
		c.Dev.Mul(dx, dx, m.masks[l])
	}
	return dx, nil
}

// freeInput frees layer l's input and mask once nothing needs them.
func (m *Model) freeInput(c *Context, l int) {
	if m.owned[l] && m.inputs[l] != nil {
		c.Dev.Free(m.inputs[l])
	}
	if m.masks[l] != nil {
		c.Dev.Free(m.masks[l])
	}
	m.inputs[l], m.owned[l], m.masks[l] = nil, false, nil
	if l < len(m.acts) && m.acts[l] != nil {
		c.Dev.Free(m.acts[l])
		m.acts[l] = nil
	}
}

// actOr returns acts[l] when the model kept it, else t.
func (m *Model) actOr(l int, t *tensor.Tensor) *tensor.Tensor {
	if l < len(m.acts) && m.acts[l] != nil {
		return m.acts[l]
	}
	return t
}

// Release frees the state of a pass whose backward will not run.
func (m *Model) Release(c *Context) {
	for _, layer := range m.Layers {
		layer.Release(c)
	}
	for l := range m.inputs {
		m.freeInput(c, l)
	}
	m.inputs, m.owned, m.masks, m.acts, m.dsts = nil, nil, nil, nil, nil
}

// BackwardReadsTranspose reports whether the backward pass reads the
// transpose of the block of layer l (device SpMMT). GAT scatters over its
// own attention weights and never does; a first layer that aggregates
// before its transform does not either, since its input, the features,
// needs no gradient. Every other layer is assumed to.
func (m *Model) BackwardReadsTranspose(l int) bool {
	if m.Spec.Kind == KindGAT {
		return false
	}
	if l == 0 && len(m.Layers) > 0 {
		if a, ok := m.Layers[0].(interface{ AggregatesFirst() bool }); ok && a.AggregatesFirst() {
			return false
		}
	}
	return true
}

// ForwardLayer runs layer l alone in evaluation mode, with the activation
// that follows it unless it is the last: the step of layer-wise inference.
// The caller owns the result.
func (m *Model) ForwardLayer(c *Context, l int, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if l < 0 || l >= len(m.Layers) {
		return nil, fmt.Errorf("layer %d out of range [0, %d)", l, len(m.Layers))
	}
	ec := *c
	ec.Train = false
	y, err := m.Layers[l].Forward(&ec, blk, x)
	if err != nil {
		return nil, err
	}
	if l < len(m.Layers)-1 && !m.selfActivated() {
		m.activate(c.Dev, y)
	}
	return y, nil
}

// FromAggregate runs layer l (a Precomputable layer) in evaluation mode
// from a precomputed aggregate of its input and the destinations' own
// input rows (nil when the layer's UsesRoot is false), with the activation
// that follows it unless it is the last. It returns what ForwardLayer
// would: exactly when the layer aggregates first, else up to the rounding
// of the sums. The caller owns the result.
func (m *Model) FromAggregate(c *Context, l int, agg, xdst *tensor.Tensor) (*tensor.Tensor, error) {
	p, ok := m.Layers[l].(Precomputable)
	if !ok {
		return nil, fmt.Errorf("layer %d cannot run from an aggregate of its input", l+1)
	}
	ec := *c
	ec.Train = false
	y, err := p.FromAggregate(&ec, agg, xdst)
	if err != nil {
		return nil, err
	}
	if l < len(m.Layers)-1 && !m.selfActivated() {
		m.activate(c.Dev, y)
	}
	return y, nil
}

// PrepareBlock returns the block a layer of this model should run on. GCN
// adds self-loops and sets normalization weights from the nodes' degrees in
// the whole graph (deg[v] is node v's degree plus one for the self-loop;
// srcNodes maps the block's local sources to global ids); GraphSAGE uses the
// block as it is (its root weight stands in for the self-loop); GAT adds
// self-loops and computes its own attention weights.
func (m *Model) PrepareBlock(blk *graph.Block, srcNodes []int32, deg []float32) *graph.Block {
	if m.Spec.Kind == KindGAT {
		return blk.AddSelfLoops() // GAT attends over itself too, as PyG does
	}
	if m.Spec.Kind != KindGCN && m.Spec.Kind != KindAPPNP && m.Spec.Kind != KindGCNII {
		return blk
	}
	b := blk.AddSelfLoops()
	local := make([]float32, b.NumSrc)
	for j := range local {
		local[j] = deg[srcNodes[j]]
	}
	b.SetGCNWeightsGlobal(local)
	return b
}

// Snapshot returns an inference-only copy of the model: its weights are
// copied into new tensors (no gradients or optimizer moments), so the
// snapshot can be evaluated on another goroutine while the model trains on.
// Free it with Free.
func (m *Model) Snapshot(dev device.Device) (*Model, error) {
	s := &Model{Spec: m.Spec}
	clone := func(p *Param) (*Param, error) {
		w, err := dev.Alloc(p.W.Rows, p.W.Cols)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", p.Name, err)
		}
		dev.Copy(w, p.W)
		return &Param{Name: p.Name, W: w, Decay: p.Decay, Conv: p.Conv, Output: p.Output}, nil
	}
	for _, layer := range m.Layers {
		ps := layer.Params()
		cs := make([]*Param, len(ps))
		for i, p := range ps {
			c, err := clone(p)
			if err != nil {
				s.Free(dev)
				return nil, err
			}
			cs[i] = c
		}
		switch l := layer.(type) {
		case *GCNConv:
			s.Layers = append(s.Layers, &GCNConv{In: l.In, Out: l.Out, W: cs[0], B: cs[1]})
		case *SAGEConv:
			s.Layers = append(s.Layers, &SAGEConv{In: l.In, Out: l.Out, Wl: cs[0], Wr: cs[1], B: cs[2]})
		case *GATConv:
			s.Layers = append(s.Layers, l.withParams(cs))
		case *PropConv:
			s.Layers = append(s.Layers, l.withParams(cs))
		default:
			for _, c := range cs {
				c.free(dev)
			}
			s.Free(dev)
			return nil, fmt.Errorf("snapshot: layer type %T not supported", layer)
		}
	}
	return s, nil
}
