package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Defaults of the initial-residual models (APPNP and GCNII).
const (
	// DefaultAlpha is the teleport (initial-residual) weight α of APPNP and
	// GCNII, used when Spec.Alpha is 0.
	DefaultAlpha = 0.1
	// DefaultTheta is GCNII's λ (β_l = ln(λ/l + 1)), used when Spec.Theta
	// is 0.
	DefaultTheta = 0.5
)

// PropConv is one propagation step of an initial-residual model, APPNP or
// GCNII. It computes
//
//	P = (1-α) Â H + α X0[dst]
//	Z = P                              (APPNP)
//	Z = ReLU((1-β) P + β P W)          (GCNII, shared weights)
//
// where Â is the block's GCN-normalized adjacency with self-loops, H the
// current embeddings of the block's sources and X0 the initial embeddings
// (APPNP's MLP output, GCNII's input projection). Because the destinations of
// a block are the prefix of its sources, X0[dst] are the first NumDst rows.
//
// To fit the one-block-per-layer model, a step that is not the last outputs
// [Z | X0[dst]] (NumDst×2C), so that the next step, and layer-wise inference,
// which only passes each layer's output rows on, find X0 beside H. The first
// step computes X0 from the raw input with its stem (the MLP or input
// projection); the last outputs Z, or GCNII's output projection of it. Only
// the destinations' X0 columns of an input are read (a halo's may be zero,
// as under GNNAutoScale: see Model.EmbedDim). The halves of [H | X0] rows
// move by row gathers and scatters over a 2n×C view (see halves).
// PropConv applies its own ReLU and dropout: the model adds none between
// these layers.
type PropConv struct {
	In, Out int // Dims: the layer's input and output widths
	C       int // width of H and X0
	Alpha   float32
	Beta    float32 // GCNII's identity-mapping weight (with W)
	// Stem (first step only) maps the input rows to X0: each linear is
	// preceded by dropout and followed by ReLU, except the last unless
	// StemReLU is set.
	Stem     []*Linear
	StemReLU bool
	W        *Param  // GCNII's C×C weight, or nil (APPNP)
	ReLU     bool    // ReLU on Z (GCNII)
	DropH    bool    // dropout on H before propagating (GCNII)
	Head     *Linear // last step only: dropout, then this linear (GCNII)
	Dropout  float32
	First    bool
	Last     bool
	site     int // base dropout site
	s        propState
}

type propState struct {
	live     bool
	blk      *graph.Block
	own      []*tensor.Tensor
	stemIn   []*tensor.Tensor // input of each stem linear (after dropout)
	stemMask []*tensor.Tensor
	stemOut  []*tensor.Tensor // output of each stem linear (after its ReLU)
	hmask    *tensor.Tensor
	p, out   *tensor.Tensor
	headIn   *tensor.Tensor
	headMask *tensor.Tensor
}

func (s *propState) release(c *Context) {
	for _, t := range s.own {
		c.Dev.Free(t)
	}
	*s = propState{}
}

// Dims returns the input and output widths.
func (l *PropConv) Dims() (int, int) { return l.In, l.Out }

// Params returns the stem's, W's and the head's parameters, in that order.
func (l *PropConv) Params() []*Param {
	var ps []*Param
	for _, lin := range l.Stem {
		ps = append(ps, lin.W, lin.B)
	}
	if l.W != nil {
		ps = append(ps, l.W)
	}
	if l.Head != nil {
		ps = append(ps, l.Head.W, l.Head.B)
	}
	return ps
}

// Release frees state kept for a backward pass that will not come.
func (l *PropConv) Release(c *Context) { l.s.release(c) }

// selfActivated marks layers that apply their own activation and dropout.
func (l *PropConv) selfActivated() {}

// selfActivated reports whether the model's layers apply their own
// activations and dropout (the model then adds none between them).
func (m *Model) selfActivated() bool {
	for _, l := range m.Layers {
		if _, ok := l.(interface{ selfActivated() }); !ok {
			return false
		}
	}
	return len(m.Layers) > 0
}

// Forward runs the step over blk from x (NumSrc×In).
func (l *PropConv) Forward(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Cols != l.In || x.Rows != blk.NumSrc {
		return nil, fmt.Errorf("propagation: input %s, block has %d sources, layer expects %d columns", x.Shape(), blk.NumSrc, l.In)
	}
	if blk.NumDst > blk.NumSrc {
		return nil, fmt.Errorf("propagation: block has %d destinations but only %d sources (destinations must be a prefix of the sources)", blk.NumDst, blk.NumSrc)
	}
	l.s.release(c)
	dev := c.Dev
	s := propState{blk: blk}
	alloc := func(r, cols int) (*tensor.Tensor, error) {
		t, err := dev.Alloc(r, cols)
		if err == nil {
			s.own = append(s.own, t)
		}
		return t, err
	}
	fail := func(err error) (*tensor.Tensor, error) {
		s.release(c)
		return nil, err
	}
	drop := func(t *tensor.Tensor, site int) (*tensor.Tensor, *tensor.Tensor, error) {
		if !c.Train || l.Dropout == 0 {
			return t, nil, nil
		}
		mask, err := alloc(t.Rows, t.Cols)
		if err != nil {
			return nil, nil, err
		}
		y, err := alloc(t.Rows, t.Cols)
		if err != nil {
			return nil, nil, err
		}
		dev.DropoutMask(mask, l.Dropout, c.maskSeed(l.site+site))
		dev.Mul(y, t, mask)
		return y, mask, nil
	}
	nd, ns, C := blk.NumDst, blk.NumSrc, l.C
	var x0d, h *tensor.Tensor
	if l.First {
		cur := x
		for i, lin := range l.Stem {
			d, mask, err := drop(cur, i)
			if err != nil {
				return fail(err)
			}
			y, err := alloc(ns, lin.Out)
			if err != nil {
				return fail(err)
			}
			lin.forward(dev, d, y)
			if i < len(l.Stem)-1 || l.StemReLU {
				dev.Relu(y, y)
			}
			s.stemIn = append(s.stemIn, d)
			s.stemMask = append(s.stemMask, mask)
			s.stemOut = append(s.stemOut, y)
			cur = y
		}
		h, x0d = cur, cur.RowSlice(0, nd)
	} else {
		// x is [H | X0]: H of every source, X0 of the destinations only.
		var err error
		if h, err = alloc(ns, C); err != nil {
			return fail(err)
		}
		if x0d, err = alloc(nd, C); err != nil {
			return fail(err)
		}
		dev.Gather(h, halves(x), halfRows(ns, 0))
		dev.Gather(x0d, halves(x), halfRows(nd, 1))
	}
	if l.DropH {
		var err error
		if h, s.hmask, err = drop(h, 4); err != nil {
			return fail(err)
		}
	}
	p, err := alloc(nd, C)
	if err != nil {
		return fail(err)
	}
	dev.SpMM(p, blk, h, device.AggWeighted)
	dev.Scale(1-l.Alpha, p)
	dev.Axpy(l.Alpha, x0d, p)
	out := p
	if l.W != nil {
		if out, err = alloc(nd, C); err != nil {
			return fail(err)
		}
		dev.Gemm(false, false, l.Beta, p, l.W.W, 0, out)
		dev.Axpy(1-l.Beta, p, out)
	}
	if l.ReLU {
		dev.Relu(out, out)
	}
	s.p, s.out = p, out
	var y *tensor.Tensor
	switch {
	case l.Last && l.Head != nil:
		hin, mask, err := drop(out, 5)
		if err != nil {
			return fail(err)
		}
		s.headIn, s.headMask = hin, mask
		if y, err = dev.Alloc(nd, l.Head.Out); err != nil {
			return fail(err)
		}
		l.Head.forward(dev, hin, y)
	case l.Last:
		if y, err = dev.Alloc(nd, C); err != nil {
			return fail(err)
		}
		dev.Copy(y, out)
	default:
		if y, err = dev.Alloc(nd, 2*C); err != nil { // zero-filled
			return fail(err)
		}
		dev.ScatterAdd(halves(y), out, halfRows(nd, 0))
		dev.ScatterAdd(halves(y), x0d, halfRows(nd, 1))
	}
	if c.Train {
		s.live = true
		l.s = s
	} else {
		s.release(c)
	}
	return y, nil
}

// Backward sets the parameters' gradients and returns dX.
func (l *PropConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	s := &l.s
	if !s.live {
		return nil, fmt.Errorf("propagation: backward without a training forward")
	}
	defer l.Release(c)
	dev := c.Dev
	var tmp []*tensor.Tensor
	defer func() {
		for _, t := range tmp {
			dev.Free(t)
		}
	}()
	alloc := func(r, cols int) (*tensor.Tensor, error) {
		t, err := dev.Alloc(r, cols)
		if err == nil {
			tmp = append(tmp, t)
		}
		return t, err
	}
	blk := s.blk
	nd, ns, C := blk.NumDst, blk.NumSrc, l.C
	dOut, err := alloc(nd, C)
	if err != nil {
		return nil, err
	}
	var dx0d *tensor.Tensor // gradient of the carried X0[dst] columns
	switch {
	case l.Last && l.Head != nil:
		dh, err := l.Head.backward(dev, s.headIn, dy, true)
		if err != nil {
			return nil, err
		}
		tmp = append(tmp, dh)
		if s.headMask != nil {
			dev.Mul(dh, dh, s.headMask)
		}
		dev.Copy(dOut, dh)
	case l.Last:
		dev.Copy(dOut, dy)
	default:
		dev.Gather(dOut, halves(dy), halfRows(nd, 0))
		if dx0d, err = alloc(nd, C); err != nil {
			return nil, err
		}
		dev.Gather(dx0d, halves(dy), halfRows(nd, 1))
	}
	if l.ReLU {
		dev.ReluBackward(dOut, dOut, s.out)
	}
	dp := dOut
	if l.W != nil {
		// out = (1-β) P + β P W: dW = β Pᵀ dOut; dP = (1-β) dOut + β dOut Wᵀ.
		dev.Gemm(true, false, l.Beta, s.p, dOut, 0, l.W.G)
		if dp, err = alloc(nd, C); err != nil {
			return nil, err
		}
		dev.Copy(dp, dOut)
		dev.Gemm(false, true, l.Beta, dOut, l.W.W, 1-l.Beta, dp)
	}
	if !l.First && !needDX {
		return nil, nil
	}
	// P = (1-α) Â H + α X0[dst].
	dh, err := alloc(ns, C)
	if err != nil {
		return nil, err
	}
	dev.SpMMT(dh, blk, dp, device.AggWeighted)
	dev.Scale(1-l.Alpha, dh)
	if s.hmask != nil {
		dev.Mul(dh, dh, s.hmask)
	}
	// X0[dst]'s gradient: α dP plus what the next steps sent back.
	if dx0d == nil {
		if dx0d, err = alloc(nd, C); err != nil {
			return nil, err
		}
	}
	dev.Axpy(l.Alpha, dp, dx0d)
	if !l.First {
		dx, err := dev.Alloc(ns, 2*C) // zero-filled: halo rows get no X0 gradient
		if err != nil {
			return nil, err
		}
		dev.ScatterAdd(halves(dx), dh, halfRows(ns, 0))
		dev.ScatterAdd(halves(dx), dx0d, halfRows(nd, 1))
		return dx, nil
	}
	// The first step's H is X0 (after dropout): its gradient joins X0's.
	dev.Axpy(1, dx0d, dh.RowSlice(0, nd))
	d := dh
	for i := len(l.Stem) - 1; i >= 0; i-- {
		if i < len(l.Stem)-1 || l.StemReLU {
			dev.ReluBackward(d, d, s.stemOut[i])
		}
		need := i > 0 || needDX
		din, err := l.Stem[i].backward(dev, s.stemIn[i], d, need)
		if err != nil || !need {
			return nil, err
		}
		if s.stemMask[i] != nil {
			dev.Mul(din, din, s.stemMask[i])
		}
		if i == 0 {
			return din, nil
		}
		tmp = append(tmp, din)
		d = din
	}
	return nil, nil
}

// halves views an n×2C tensor as a 2n×C one sharing its storage: row 2i
// is the left half of row i ([Z | X0]'s Z), row 2i+1 its right half (X0).
// Gathering or scattering the rows halfRows gives moves a column half at
// the cost of a row copy.
func halves(t *tensor.Tensor) *tensor.Tensor {
	if t.Cols%2 != 0 {
		panic(fmt.Sprintf("propagation: halves of %s: odd width", t.Shape()))
	}
	v := &tensor.Tensor{Rows: 2 * t.Rows, Cols: t.Cols / 2, Handle: t.Handle, View: true, Off: t.Off}
	if t.Data != nil {
		v.Data = t.Data[:t.Len()]
	}
	return v
}

// halfRows returns the rows 2i+side (i < n) of a halves view: the left
// (side 0) or right (side 1) halves of the first n rows.
func halfRows(n, side int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(2*i + side)
	}
	return idx
}

// withParams returns a copy of the layer using ps (in Params order) and no
// pass state.
func (l *PropConv) withParams(ps []*Param) Layer {
	n := *l
	n.s = propState{}
	n.Stem = nil
	for _, lin := range l.Stem {
		n.Stem = append(n.Stem, &Linear{In: lin.In, Out: lin.Out, W: ps[0], B: ps[1]})
		ps = ps[2:]
	}
	if l.W != nil {
		n.W, ps = ps[0], ps[1:]
	}
	if l.Head != nil {
		n.Head = &Linear{In: l.Head.In, Out: l.Head.Out, W: ps[0], B: ps[1]}
	}
	return &n
}

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

// newAPPNP builds APPNP (Klicpera et al., 2019) as spec.Layers propagation
// steps: the first applies the 2-layer MLP (In→Hidden→Out, dropout before
// each linear, ReLU between) to its input rows, and every step propagates
// Z ← (1-α) Â Z + α H over its block. spec.Layers is the number of
// propagation steps K (hops).
func newAPPNP(dev device.Device, spec Spec, r *rng.Rand) ([]Layer, error) {
	alpha := float32(DefaultAlpha)
	if spec.Alpha != 0 {
		alpha = spec.Alpha
	}
	K, C := spec.Layers, spec.Out
	var layers []Layer
	free := func() {
		for _, l := range layers {
			for _, p := range l.Params() {
				p.free(dev)
			}
		}
	}
	for k := 0; k < K; k++ {
		l := &PropConv{In: 2 * C, Out: 2 * C, C: C, Alpha: alpha, Dropout: spec.Dropout, First: k == 0, Last: k == K-1, site: propSite + 8*k}
		if l.First {
			l.In = spec.In
			lin1, err := NewLinear(dev, "lin1", spec.In, spec.Hidden, r)
			if err != nil {
				free()
				return nil, err
			}
			lin2, err := NewLinear(dev, "lin2", spec.Hidden, C, r)
			if err != nil {
				lin1.W.free(dev)
				lin1.B.free(dev)
				free()
				return nil, err
			}
			l.Stem = []*Linear{lin1, lin2}
			lin2.W.Output, lin2.B.Output = true, true
		}
		if l.Last {
			l.Out = C
		}
		layers = append(layers, l)
	}
	return layers, nil
}

// propSite is the first dropout site of the propagation layers (the model's
// own sites are 0..Layers).
const propSite = 1 << 20
