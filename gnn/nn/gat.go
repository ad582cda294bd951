package nn

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// gatSlope is the negative slope of the LeakyReLU on attention logits.
const gatSlope = 0.2

// GATConv is Veličković et al.'s graph attention layer (PyG's GATConv).
// With H heads of C channels, the sources are projected to XW (NumSrc×HC);
// edge (i <- j) scores e_ijh = LeakyReLU(a_src,h·(XW)_jh + a_dst,h·(XW)_ih),
// normalized by a softmax over each destination's incoming edges (the
// caller adds self-loops, see Model.PrepareBlock), and destination i
// receives Σ_j α_ijh (XW)_jh per head. Heads are concatenated (Out = H·C) or
// averaged (Out = C); a bias is added. In training, attention coefficients
// are dropped with probability AttnDropout (masks drawn from the context's
// seed).
//
// The projection runs on the device; the edge computations (scores, edge
// softmax, weighted aggregation and their backward) run on host copies of
// the projected rows, so the layer works on any device at the cost of a
// round trip per pass.
type GATConv struct {
	In, Out     int
	Heads, Ch   int  // heads and channels per head
	Concat      bool // concatenate heads (else average them)
	AttnDropout float32
	// W is In×HC; AttSrc and AttDst are 1×HC (head h owns columns
	// [hC, (h+1)C)); B is 1×Out.
	W, AttSrc, AttDst, B *Param

	site int // dropout site, distinct per layer
	s    saved
	g    gatSaved
}

// gatSaved is the host state kept between forward and backward.
type gatSaved struct {
	xw    []float32 // NumSrc×HC projected sources
	z     []float32 // E×H attention logits before LeakyReLU
	alpha []float32 // E×H softmax coefficients (before dropout)
	mask  []float32 // E×H dropout mask, or nil
}

// NewGATConv allocates a GAT layer: Glorot-initialized projection and
// attention vectors, zero bias. out is the per-head channel count; the
// layer's output width is heads*out when concat is set, out otherwise.
// site distinguishes the layer's attention-dropout masks from other
// layers'.
func NewGATConv(dev device.Device, name string, in, out, heads int, concat bool, attnDropout float32, site int, r *rng.Rand) (*GATConv, error) {
	if in < 1 || out < 1 || heads < 1 {
		return nil, fmt.Errorf("gat: widths and heads must be positive, got in %d, out %d, heads %d", in, out, heads)
	}
	hc := heads * out
	width := out
	if concat {
		width = hc
	}
	l := &GATConv{In: in, Out: width, Heads: heads, Ch: out, Concat: concat, AttnDropout: attnDropout, site: site}
	var err error
	alloc := func(p **Param, n string, rows, cols int, decay bool) {
		if err == nil {
			*p, err = newParam(dev, name+"."+n, rows, cols, decay)
		}
	}
	alloc(&l.W, "weight", in, hc, true)
	alloc(&l.AttSrc, "att_src", 1, hc, true)
	alloc(&l.AttDst, "att_dst", 1, hc, true)
	alloc(&l.B, "bias", 1, width, false)
	if err != nil {
		for _, p := range l.Params() {
			if p != nil {
				p.free(dev)
			}
		}
		return nil, err
	}
	glorot(dev, l.W, r)
	l.W.Conv, l.AttSrc.Conv, l.AttDst.Conv = true, true, true
	// PyG draws the attention vectors (1×H×C) with fan-in H and fan-out C.
	a := math.Sqrt(6 / float64(heads+out))
	for _, p := range []*Param{l.AttSrc, l.AttDst} {
		host := make([]float32, hc)
		for i := range host {
			host[i] = float32((2*r.Float64() - 1) * a)
		}
		dev.CopyFromHost(p.W, host)
	}
	return l, nil
}

// Dims returns the input and output widths.
func (l *GATConv) Dims() (int, int) { return l.In, l.Out }

// Params returns the projection, the attention vectors and the bias.
func (l *GATConv) Params() []*Param { return []*Param{l.W, l.AttSrc, l.AttDst, l.B} }

// withParams returns an inference copy of the layer over ps (in Params
// order).
func (l *GATConv) withParams(ps []*Param) *GATConv {
	return &GATConv{In: l.In, Out: l.Out, Heads: l.Heads, Ch: l.Ch, Concat: l.Concat, AttnDropout: l.AttnDropout, site: l.site,
		W: ps[0], AttSrc: ps[1], AttDst: ps[2], B: ps[3]}
}

func hostOf(dev device.Device, t *tensor.Tensor) []float32 {
	h := make([]float32, t.Len())
	dev.CopyToHost(h, t)
	return h
}

// headScores returns, for rows [0, n) of xw (rows stride apart, the
// projection in the first H·C columns of each), the per-head dot products
// with the attention vector att (n×H).
func (l *GATConv) headScores(xw []float32, stride int, att []float32, n int) []float32 {
	H, C := l.Heads, l.Ch
	s := make([]float32, n*H)
	for j := 0; j < n; j++ {
		row := xw[j*stride : j*stride+H*C]
		for h := 0; h < H; h++ {
			var acc float32
			for c := 0; c < C; c++ {
				acc += row[h*C+c] * att[h*C+c]
			}
			s[j*H+h] = acc
		}
	}
	return s
}

// EdgeSoftmax sets alpha (E×H) to the softmax of logits (E×H) over each
// destination row of blk, per head. Rows without edges are left alone.
func EdgeSoftmax(blk *graph.Block, logits, alpha []float32, heads int) {
	for i := 0; i < blk.NumDst; i++ {
		lo, hi := blk.Indptr[i], blk.Indptr[i+1]
		if lo == hi {
			continue
		}
		for h := 0; h < heads; h++ {
			mx := float32(math.Inf(-1))
			for e := lo; e < hi; e++ {
				mx = max(mx, logits[e*int64(heads)+int64(h)])
			}
			var sum float64
			for e := lo; e < hi; e++ {
				k := e*int64(heads) + int64(h)
				v := math.Exp(float64(logits[k] - mx))
				alpha[k] = float32(v)
				sum += v
			}
			inv := float32(1 / sum)
			for e := lo; e < hi; e++ {
				alpha[e*int64(heads)+int64(h)] *= inv
			}
		}
	}
}

// Forward computes the attention-weighted aggregation of the projected
// sources.
func (l *GATConv) Forward(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Cols != l.In || x.Rows != blk.NumSrc {
		return nil, fmt.Errorf("gat: input %s, block has %d sources, layer expects %d columns", x.Shape(), blk.NumSrc, l.In)
	}
	dev := c.Dev
	H, C := l.Heads, l.Ch
	hc := H * C
	xwT, err := dev.Alloc(blk.NumSrc, hc)
	if err != nil {
		return nil, err
	}
	dev.Gemm(false, false, 1, x, l.W.W, 0, xwT)
	xw := hostOf(dev, xwT)
	dev.Free(xwT)
	as := l.headScores(xw, hc, hostOf(dev, l.AttSrc.W), blk.NumSrc)
	ad := l.headScores(xw, hc, hostOf(dev, l.AttDst.W), blk.NumDst)
	z, alpha := l.attention(blk, as, ad)
	var mask []float32
	if E := blk.NumEdges(); c.Train && l.AttnDropout > 0 && E > 0 {
		m, err := dev.Alloc(int(E), H)
		if err != nil {
			return nil, err
		}
		dev.DropoutMask(m, l.AttnDropout, c.maskSeed(l.site))
		mask = hostOf(dev, m)
		dev.Free(m)
	}
	out := l.aggregate(blk, xw, hc, alpha, mask)
	y, err := dev.Alloc(blk.NumDst, l.Out)
	if err != nil {
		return nil, err
	}
	dev.CopyFromHost(y, out)
	dev.AddBias(y, l.B.W)
	if c.Train {
		l.s = saved{blk: blk, x: x, live: true}
		l.g = gatSaved{xw: xw, z: z, alpha: alpha, mask: mask}
	}
	return y, nil
}

// attention returns the attention logits before the LeakyReLU (E×H) and
// the softmax coefficients (E×H) of blk's edges from the source scores as
// (NumSrc×H) and the destination scores ad (NumDst×H).
func (l *GATConv) attention(blk *graph.Block, as, ad []float32) (z, alpha []float32) {
	H := l.Heads
	E := blk.NumEdges()
	z = make([]float32, E*int64(H))
	lr := make([]float32, len(z))
	for i := 0; i < blk.NumDst; i++ {
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			j := int(blk.Indices[e])
			for h := 0; h < H; h++ {
				v := as[j*H+h] + ad[i*H+h]
				z[e*int64(H)+int64(h)] = v
				if v < 0 {
					v *= gatSlope
				}
				lr[e*int64(H)+int64(h)] = v
			}
		}
	}
	alpha = make([]float32, len(z))
	EdgeSoftmax(blk, lr, alpha, H)
	return z, alpha
}

// aggregate returns the destinations' rows (NumDst×Out, on the host): the
// projected sources xw (rows stride apart, the projection in the first
// H·C columns of each) weighed by the attention coefficients alpha, times
// the dropout mask when it is not nil, per head, concatenated or
// averaged.
func (l *GATConv) aggregate(blk *graph.Block, xw []float32, stride int, alpha, mask []float32) []float32 {
	H, C := l.Heads, l.Ch
	out := make([]float32, blk.NumDst*l.Out)
	scale := float32(1)
	if !l.Concat {
		scale = 1 / float32(H)
	}
	for i := 0; i < blk.NumDst; i++ {
		orow := out[i*l.Out : (i+1)*l.Out]
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			src := xw[int(blk.Indices[e])*stride:]
			for h := 0; h < H; h++ {
				k := e*int64(H) + int64(h)
				a := alpha[k]
				if mask != nil {
					a *= mask[k]
				}
				if a == 0 {
					continue
				}
				a *= scale
				dst := orow
				if l.Concat {
					dst = orow[h*C:]
				}
				for ch, v := range src[h*C : (h+1)*C] {
					dst[ch] += a * v
				}
			}
		}
	}
	return out
}

// Backward sets the gradients of the projection, attention vectors and
// bias and returns dX.
func (l *GATConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	if !l.s.live {
		return nil, fmt.Errorf("gat: backward without a training forward")
	}
	defer l.Release(c)
	dev, blk, x := c.Dev, l.s.blk, l.s.x
	hc := l.Heads * l.Ch
	dev.SumRows(l.B.G, dy)
	dxw, dz := l.aggregateBackward(blk, hostOf(dev, dy))
	das, dad := logitBackward(blk, dz, l.Heads)
	attS, attD := hostOf(dev, l.AttSrc.W), hostOf(dev, l.AttDst.W)
	gS, gD := l.scoreBackward(blk, das, dad, attS, attD, dxw)
	dev.CopyFromHost(l.AttSrc.G, gS)
	dev.CopyFromHost(l.AttDst.G, gD)
	dxwT, err := dev.Alloc(blk.NumSrc, hc)
	if err != nil {
		return nil, err
	}
	defer dev.Free(dxwT)
	dev.CopyFromHost(dxwT, dxw)
	dev.Gemm(true, false, 1, x, dxwT, 0, l.W.G)
	if !needDX {
		return nil, nil
	}
	dx, err := dev.Alloc(blk.NumSrc, l.In)
	if err != nil {
		return nil, err
	}
	dev.Gemm(false, true, 1, dxwT, l.W.W, 0, dx)
	return dx, nil
}

// aggregateBackward takes dyh, the host copy of the output's gradient,
// back through the attention-weighted aggregation of the forward pass. It
// returns the gradient of the projected sources that flows through the
// aggregation (NumSrc×H·C; the scores add theirs later) and that of the
// pre-activation logits (E×H), through the dropout, the edge softmax and
// the leaky ReLU.
func (l *GATConv) aggregateBackward(blk *graph.Block, dyh []float32) (dxw, dz []float32) {
	g := l.g
	H, C := l.Heads, l.Ch
	hc := H * C
	scale := float32(1)
	if !l.Concat {
		scale = 1 / float32(H)
	}
	// dout(i, h) is the gradient reaching head h's aggregate of row i.
	dout := func(i, h int) []float32 {
		if l.Concat {
			return dyh[i*l.Out+h*C : i*l.Out+(h+1)*C]
		}
		return dyh[i*l.Out : (i+1)*l.Out]
	}
	dxw = make([]float32, blk.NumSrc*hc)
	dz = make([]float32, len(g.z))
	for i := 0; i < blk.NumDst; i++ {
		lo, hi := blk.Indptr[i], blk.Indptr[i+1]
		for h := 0; h < H; h++ {
			d := dout(i, h)
			// dα (before dropout) and its α-weighted sum for the softmax.
			var dot float64
			for e := lo; e < hi; e++ {
				j := int(blk.Indices[e])
				k := e*int64(H) + int64(h)
				src := g.xw[j*hc+h*C : j*hc+(h+1)*C]
				var da float32
				for ch, v := range src {
					da += d[ch] * v
				}
				da *= scale
				a := g.alpha[k]
				if g.mask != nil {
					da *= g.mask[k]
					a *= g.mask[k]
				}
				a *= scale
				if a != 0 {
					dst := dxw[j*hc+h*C : j*hc+(h+1)*C]
					for ch, v := range d {
						dst[ch] += a * v
					}
				}
				dz[k] = da
				dot += float64(g.alpha[k] * da)
			}
			for e := lo; e < hi; e++ {
				k := e*int64(H) + int64(h)
				v := g.alpha[k] * (dz[k] - float32(dot))
				if g.z[k] < 0 {
					v *= gatSlope
				}
				dz[k] = v
			}
		}
	}
	return dxw, dz
}

// logitBackward sums the logit gradients dz (E×H) into those of the source
// scores (NumSrc×H) and the destination scores (NumDst×H) they came from.
func logitBackward(blk *graph.Block, dz []float32, H int) (das, dad []float32) {
	das = make([]float32, blk.NumSrc*H)
	dad = make([]float32, blk.NumDst*H)
	for i := 0; i < blk.NumDst; i++ {
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			j := int(blk.Indices[e])
			for h := 0; h < H; h++ {
				v := dz[e*int64(H)+int64(h)]
				das[j*H+h] += v
				dad[i*H+h] += v
			}
		}
	}
	return das, dad
}

// scoreBackward takes the score gradients das and dad back through the
// per-head dot products with the attention vectors attS and attD: it
// returns the vectors' gradients and adds the projected rows' gradient to
// dxw.
func (l *GATConv) scoreBackward(blk *graph.Block, das, dad, attS, attD, dxw []float32) (gS, gD []float32) {
	xw := l.g.xw
	H, C := l.Heads, l.Ch
	hc := H * C
	gS, gD = make([]float32, hc), make([]float32, hc)
	for j := 0; j < blk.NumSrc; j++ {
		for h := 0; h < H; h++ {
			s := das[j*H+h]
			var t float32
			if j < blk.NumDst {
				t = dad[j*H+h]
			}
			if s == 0 && t == 0 {
				continue
			}
			for ch := 0; ch < C; ch++ {
				k := h*C + ch
				v := xw[j*hc+k]
				gS[k] += s * v
				gD[k] += t * v
				dxw[j*hc+k] += s*attS[k] + t*attD[k]
			}
		}
	}
	return gS, gD
}

// Release frees state kept for a backward pass that will not come.
func (l *GATConv) Release(c *Context) {
	l.s.release(c)
	l.g = gatSaved{}
}

// gatSite numbers GAT attention-dropout sites (plus the layer index) apart
// from the model's feature-dropout sites.
const gatSite = 1 << 20
