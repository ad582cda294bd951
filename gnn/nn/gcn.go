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
	w, b, err := newWeightBias(dev, name, in, out, r)
	if err != nil {
		return nil, err
	}
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
	l.s.keep(c, blk, x, mid)
	return y, nil
}

// Backward sets dW, db and returns dX.
func (l *GCNConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	if !l.s.live {
		return nil, fmt.Errorf("gcn: backward without a training forward")
	}
	defer l.s.release(c)
	c.Dev.SumRows(l.B.G, dy)
	return l.s.backwardAggLinear(c.Dev, dy, l.W, device.AggWeighted, l.transformFirst(), needDX)
}

// Release frees state kept for a backward pass that will not come.
func (l *GCNConv) Release(c *Context) { l.s.release(c) }

// AggregatesFirst reports whether Forward aggregates before multiplying.
func (l *GCNConv) AggregatesFirst() bool { return !l.transformFirst() }

// Aggregate returns Â X over blk.
func (l *GCNConv) Aggregate(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	return aggregateBlock(c, blk, x, device.AggWeighted)
}

// FromAggregate returns (Â X) W + b; GCN does not use xdst.
func (l *GCNConv) FromAggregate(c *Context, agg, _ *tensor.Tensor) (*tensor.Tensor, error) {
	y, err := c.Dev.Alloc(agg.Rows, l.Out)
	if err != nil {
		return nil, err
	}
	l.fromAggregateInto(c, agg, nil, y)
	return y, nil
}

// fromAggregateInto is FromAggregate writing into y (agg.Rows×Out).
func (l *GCNConv) fromAggregateInto(c *Context, agg, _, y *tensor.Tensor) {
	c.Dev.Gemm(false, false, 1, agg, l.W.W, 0, y)
	c.Dev.AddBias(y, l.B.W)
}
