package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// GCNConv is Kipf & Welling's graph convolution: Y = Â X W + b, where Â is
// the block's weighted adjacency (Block.Weights, GCN-normalized with
// self-loops by the caller). When In > Out it multiplies by W first and
// aggregates the narrower rows, otherwise it aggregates first.
type GCNConv struct {
	In, Out int
	W, B    *Param
	s       saved
}

// NewGCNConv allocates a GCN layer with Glorot-initialized weights.
func NewGCNConv(dev device.Device, name string, in, out int, r *rng.Rand) (*GCNConv, error) {
	w, err := newParam(dev, name+".weight", in, out, true)
	if err != nil {
		return nil, err
	}
	b, err := newParam(dev, name+".bias", 1, out, false)
	if err != nil {
		w.free(dev)
		return nil, err
	}
	glorot(dev, w, r)
	w.Conv = true
	return &GCNConv{In: in, Out: out, W: w, B: b}, nil
}

// Dims returns the input and output widths.
func (l *GCNConv) Dims() (int, int) { return l.In, l.Out }

// Params returns the weight and bias.
func (l *GCNConv) Params() []*Param { return []*Param{l.W, l.B} }

func (l *GCNConv) transformFirst() bool { return l.In > l.Out }

// Forward computes Â X W + b.
func (l *GCNConv) Forward(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Cols != l.In || x.Rows != blk.NumSrc {
		return nil, fmt.Errorf("gcn: input %s, block has %d sources, layer expects %d columns", x.Shape(), blk.NumSrc, l.In)
	}
	dev := c.Dev
	var mid, y *tensor.Tensor
	var err error
	if l.transformFirst() {
		if mid, err = dev.Alloc(blk.NumSrc, l.Out); err != nil {
			return nil, err
		}
		dev.Gemm(false, false, 1, x, l.W.W, 0, mid)
		if y, err = dev.Alloc(blk.NumDst, l.Out); err != nil {
			dev.Free(mid)
			return nil, err
		}
		dev.SpMM(y, blk, mid, device.AggWeighted)
		// mid is not needed by backward in this order.
		dev.Free(mid)
		mid = nil
	} else {
		if mid, err = dev.Alloc(blk.NumDst, l.In); err != nil {
			return nil, err
		}
		dev.SpMM(mid, blk, x, device.AggWeighted)
		if y, err = dev.Alloc(blk.NumDst, l.Out); err != nil {
			dev.Free(mid)
			return nil, err
		}
		dev.Gemm(false, false, 1, mid, l.W.W, 0, y)
	}
	dev.AddBias(y, l.B.W)
	if c.Train {
		l.s = saved{blk: blk, x: x, live: true}
		if mid != nil {
			l.s.own = []*tensor.Tensor{mid}
		}
	} else if mid != nil {
		dev.Free(mid)
	}
	return y, nil
}

// Backward sets dW, db and returns dX.
func (l *GCNConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	if !l.s.live {
		return nil, fmt.Errorf("gcn: backward without a training forward")
	}
	defer l.s.release(c)
	dev, blk, x := c.Dev, l.s.blk, l.s.x
	dev.SumRows(l.B.G, dy)
	if l.transformFirst() {
		// y = Â (X W): dH = Âᵀ dy; dW = Xᵀ dH; dX = dH Wᵀ.
		dh, err := dev.Alloc(blk.NumSrc, l.Out)
		if err != nil {
			return nil, err
		}
		defer dev.Free(dh)
		dev.SpMMT(dh, blk, dy, device.AggWeighted)
		dev.Gemm(true, false, 1, x, dh, 0, l.W.G)
		if !needDX {
			return nil, nil
		}
		dx, err := dev.Alloc(blk.NumSrc, l.In)
		if err != nil {
			return nil, err
		}
		dev.Gemm(false, true, 1, dh, l.W.W, 0, dx)
		return dx, nil
	}
	// y = (Â X) W: dW = (ÂX)ᵀ dy; dA = dy Wᵀ; dX = Âᵀ dA.
	a := l.s.own[0]
	dev.Gemm(true, false, 1, a, dy, 0, l.W.G)
	if !needDX {
		return nil, nil
	}
	da, err := dev.Alloc(blk.NumDst, l.In)
	if err != nil {
		return nil, err
	}
	defer dev.Free(da)
	dev.Gemm(false, true, 1, dy, l.W.W, 0, da)
	dx, err := dev.Alloc(blk.NumSrc, l.In)
	if err != nil {
		return nil, err
	}
	dev.SpMMT(dx, blk, da, device.AggWeighted)
	return dx, nil
}

// Release frees state kept for a backward pass that will not come.
func (l *GCNConv) Release(c *Context) { l.s.release(c) }

// AggregatesFirst reports whether Forward aggregates before multiplying.
func (l *GCNConv) AggregatesFirst() bool { return !l.transformFirst() }

// Aggregate returns Â X over blk.
func (l *GCNConv) Aggregate(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	a, err := c.Dev.Alloc(blk.NumDst, x.Cols)
	if err != nil {
		return nil, err
	}
	c.Dev.SpMM(a, blk, x, device.AggWeighted)
	return a, nil
}

// FromAggregate returns (Â X) W + b; GCN does not use xdst.
func (l *GCNConv) FromAggregate(c *Context, agg, _ *tensor.Tensor) (*tensor.Tensor, error) {
	y, err := c.Dev.Alloc(agg.Rows, l.Out)
	if err != nil {
		return nil, err
	}
	c.Dev.Gemm(false, false, 1, agg, l.W.W, 0, y)
	c.Dev.AddBias(y, l.B.W)
	return y, nil
}
