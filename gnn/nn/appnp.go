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
	s := propState{blk: blk}
	y, err := l.forward(c, &s, x)
	if err != nil {
		s.release(c)
		return nil, err
	}
	if c.Train {
		s.live = true
		l.s = s
	} else {
		s.release(c)
	}
	return y, nil
}

// forward computes the step's output from x. Every other tensor it
// allocates belongs to s, which also keeps what Backward needs.
func (l *PropConv) forward(c *Context, s *propState, x *tensor.Tensor) (*tensor.Tensor, error) {
	h, x0d, err := l.inputs(c, s, x)
	if err != nil {
		return nil, err
	}
	if l.DropH {
		if h, s.hmask, err = l.drop(c, s, h, 4); err != nil {
			return nil, err
		}
	}
	out, err := l.propagate(c, s, h, x0d)
	if err != nil {
		return nil, err
	}
	return l.output(c, s, out, x0d)
}

// alloc allocates an r×cols tensor on dev that s owns until release.
func (s *propState) alloc(dev device.Device, r, cols int) (*tensor.Tensor, error) {
	t, err := dev.Alloc(r, cols)
	if err == nil {
		s.own = append(s.own, t)
	}
	return t, err
}

// drop applies the step's dropout, at site past the layer's base site, to t
// while training and returns the result and its mask (both owned by s);
// otherwise it returns t and a nil mask.
func (l *PropConv) drop(c *Context, s *propState, t *tensor.Tensor, site int) (*tensor.Tensor, *tensor.Tensor, error) {
	if !c.Train || l.Dropout == 0 {
		return t, nil, nil
	}
	mask, err := s.alloc(c.Dev, t.Rows, t.Cols)
	if err != nil {
		return nil, nil, err
	}
	y, err := s.alloc(c.Dev, t.Rows, t.Cols)
	if err != nil {
		return nil, nil, err
	}
	c.Dev.DropoutMask(mask, l.Dropout, c.maskSeed(l.site+site))
	c.Dev.Mul(y, t, mask)
	return y, mask, nil
}

// inputs returns H of every source and X0 of the destinations: the stem's
// output (and its first rows) in the first step, the halves of x later.
func (l *PropConv) inputs(c *Context, s *propState, x *tensor.Tensor) (h, x0d *tensor.Tensor, err error) {
	nd, ns := s.blk.NumDst, s.blk.NumSrc
	if l.First {
		cur, err := l.stem(c, s, x)
		if err != nil {
			return nil, nil, err
		}
		return cur, cur.RowSlice(0, nd), nil
	}
	// x is [H | X0]: H of every source, X0 of the destinations only.
	if h, err = s.alloc(c.Dev, ns, l.C); err != nil {
		return nil, nil, err
	}
	if x0d, err = s.alloc(c.Dev, nd, l.C); err != nil {
		return nil, nil, err
	}
	c.Dev.Gather(h, halves(x), halfRows(ns, 0))
	c.Dev.Gather(x0d, halves(x), halfRows(nd, 1))
	return h, x0d, nil
}

// stem runs the stem's linears over x, keeping each one's input (after
// dropout), mask and output in s, and returns the last output: X0 of every
// source.
func (l *PropConv) stem(c *Context, s *propState, x *tensor.Tensor) (*tensor.Tensor, error) {
	cur := x
	for i, lin := range l.Stem {
		d, mask, err := l.drop(c, s, cur, i)
		if err != nil {
			return nil, err
		}
		y, err := s.alloc(c.Dev, s.blk.NumSrc, lin.Out)
		if err != nil {
			return nil, err
		}
		lin.forward(c.Dev, d, y)
		if i < len(l.Stem)-1 || l.StemReLU {
			c.Dev.Relu(y, y)
		}
		s.stemIn = append(s.stemIn, d)
		s.stemMask = append(s.stemMask, mask)
		s.stemOut = append(s.stemOut, y)
		cur = y
	}
	return cur, nil
}

// propagate computes P = (1-α) Â H + α X0[dst] and Z from it, keeps both in
// s and returns Z.
func (l *PropConv) propagate(c *Context, s *propState, h, x0d *tensor.Tensor) (*tensor.Tensor, error) {
	dev := c.Dev
	nd, C := s.blk.NumDst, l.C
	p, err := s.alloc(dev, nd, C)
	if err != nil {
		return nil, err
	}
	dev.SpMM(p, s.blk, h, device.AggWeighted)
	dev.Scale(1-l.Alpha, p)
	dev.Axpy(l.Alpha, x0d, p)
	out := p
	if l.W != nil {
		if out, err = s.alloc(dev, nd, C); err != nil {
			return nil, err
		}
		dev.Gemm(false, false, l.Beta, p, l.W.W, 0, out)
		dev.Axpy(1-l.Beta, p, out)
	}
	if l.ReLU {
		dev.Relu(out, out)
	}
	s.p, s.out = p, out
	return out, nil
}

// output returns the step's result, which s does not own, from Z (out):
// the head's output or Z in the last step, [Z | X0[dst]] before it.
func (l *PropConv) output(c *Context, s *propState, out, x0d *tensor.Tensor) (*tensor.Tensor, error) {
	dev := c.Dev
	nd, C := s.blk.NumDst, l.C
	switch {
	case l.Last && l.Head != nil:
		hin, mask, err := l.drop(c, s, out, 5)
		if err != nil {
			return nil, err
		}
		s.headIn, s.headMask = hin, mask
		y, err := dev.Alloc(nd, l.Head.Out)
		if err != nil {
			return nil, err
		}
		l.Head.forward(dev, hin, y)
		return y, nil
	case l.Last:
		y, err := dev.Alloc(nd, C)
		if err != nil {
			return nil, err
		}
		dev.Copy(y, out)
		return y, nil
	}
	y, err := dev.Alloc(nd, 2*C) // zero-filled
	if err != nil {
		return nil, err
	}
	dev.ScatterAdd(halves(y), out, halfRows(nd, 0))
	dev.ScatterAdd(halves(y), x0d, halfRows(nd, 1))
	return y, nil
}

// Backward sets the parameters' gradients and returns dX.
func (l *PropConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	s := &l.s
	if !s.live {
		return nil, fmt.Errorf("propagation: backward without a training forward")
	}
	defer l.Release(c)
	t := &temps{dev: c.Dev}
	defer t.free()
	dOut, dx0d, err := l.outputBackward(t, s, dy)
	if err != nil {
		return nil, err
	}
	dp, err := l.transformBackward(t, s, dOut)
	if err != nil {
		return nil, err
	}
	if !l.First && !needDX {
		return nil, nil
	}
	dh, dx0d, err := l.propagateBackward(t, s, dp, dx0d)
	if err != nil {
		return nil, err
	}
	if !l.First {
		dx, err := c.Dev.Alloc(s.blk.NumSrc, 2*l.C) // zero-filled: halo rows get no X0 gradient
		if err != nil {
			return nil, err
		}
		c.Dev.ScatterAdd(halves(dx), dh, halfRows(s.blk.NumSrc, 0))
		c.Dev.ScatterAdd(halves(dx), dx0d, halfRows(s.blk.NumDst, 1))
		return dx, nil
	}
	// The first step's H is X0 (after dropout): its gradient joins X0's.
	c.Dev.Axpy(1, dx0d, dh.RowSlice(0, s.blk.NumDst))
	return l.stemBackward(t, s, dh, needDX)
}

// temps holds the scratch tensors of a backward pass, freed together.
type temps struct {
	dev  device.Device
	list []*tensor.Tensor
}

// alloc allocates an r×cols scratch tensor.
func (t *temps) alloc(r, cols int) (*tensor.Tensor, error) {
	x, err := t.dev.Alloc(r, cols)
	if err == nil {
		t.list = append(t.list, x)
	}
	return x, err
}

// free frees every scratch tensor.
func (t *temps) free() {
	for _, x := range t.list {
		t.dev.Free(x)
	}
}

// outputBackward returns the gradient of Z from dy (through the head in the
// last step) and, before the last step, also that of the carried X0[dst]
// columns (nil otherwise).
func (l *PropConv) outputBackward(t *temps, s *propState, dy *tensor.Tensor) (dOut, dx0d *tensor.Tensor, err error) {
	dev := t.dev
	nd := s.blk.NumDst
	if dOut, err = t.alloc(nd, l.C); err != nil {
		return nil, nil, err
	}
	switch {
	case l.Last && l.Head != nil:
		dh, err := l.Head.backward(dev, s.headIn, dy, true)
		if err != nil {
			return nil, nil, err
		}
		t.list = append(t.list, dh)
		if s.headMask != nil {
			dev.Mul(dh, dh, s.headMask)
		}
		dev.Copy(dOut, dh)
	case l.Last:
		dev.Copy(dOut, dy)
	default:
		dev.Gather(dOut, halves(dy), halfRows(nd, 0))
		if dx0d, err = t.alloc(nd, l.C); err != nil {
			return nil, nil, err
		}
		dev.Gather(dx0d, halves(dy), halfRows(nd, 1))
	}
	return dOut, dx0d, nil
}

// transformBackward returns dP from dOut, the gradient of Z (overwritten
// through the ReLU), and sets W's gradient.
func (l *PropConv) transformBackward(t *temps, s *propState, dOut *tensor.Tensor) (*tensor.Tensor, error) {
	dev := t.dev
	if l.ReLU {
		dev.ReluBackward(dOut, dOut, s.out)
	}
	if l.W == nil {
		return dOut, nil
	}
	// out = (1-β) P + β P W: dW = β Pᵀ dOut; dP = (1-β) dOut + β dOut Wᵀ.
	dev.Gemm(true, false, l.Beta, s.p, dOut, 0, l.W.G)
	dp, err := t.alloc(s.blk.NumDst, l.C)
	if err != nil {
		return nil, err
	}
	dev.Copy(dp, dOut)
	dev.Gemm(false, true, l.Beta, dOut, l.W.W, 1-l.Beta, dp)
	return dp, nil
}

// propagateBackward returns the gradients of H (every source, through its
// dropout) and of X0[dst] from dP. dx0d, when not nil, holds what the next
// steps sent back and receives α dP.
func (l *PropConv) propagateBackward(t *temps, s *propState, dp, dx0d *tensor.Tensor) (dh, dx0 *tensor.Tensor, err error) {
	dev := t.dev
	// P = (1-α) Â H + α X0[dst].
	if dh, err = t.alloc(s.blk.NumSrc, l.C); err != nil {
		return nil, nil, err
	}
	dev.SpMMT(dh, s.blk, dp, device.AggWeighted)
	dev.Scale(1-l.Alpha, dh)
	if s.hmask != nil {
		dev.Mul(dh, dh, s.hmask)
	}
	// X0[dst]'s gradient: α dP plus what the next steps sent back.
	if dx0d == nil {
		if dx0d, err = t.alloc(s.blk.NumDst, l.C); err != nil {
			return nil, nil, err
		}
	}
	dev.Axpy(l.Alpha, dp, dx0d)
	return dh, dx0d, nil
}

// stemBackward carries d, the gradient of the stem's output (overwritten),
// back through the stem's linears, setting their gradients, and returns dX
// (nil unless needDX).
func (l *PropConv) stemBackward(t *temps, s *propState, d *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	for i := len(l.Stem) - 1; i >= 0; i-- {
		if i < len(l.Stem)-1 || l.StemReLU {
			t.dev.ReluBackward(d, d, s.stemOut[i])
		}
		need := i > 0 || needDX
		din, err := l.Stem[i].backward(t.dev, s.stemIn[i], d, need)
		if err != nil || !need {
			return nil, err
		}
		if s.stemMask[i] != nil {
			t.dev.Mul(din, din, s.stemMask[i])
		}
		if i == 0 {
			return din, nil
		}
		t.list = append(t.list, din)
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
