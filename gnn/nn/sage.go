package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// SAGEConv is GraphSAGE with mean aggregation and a root weight, as PyG's
// SAGEConv: Y = mean_{j∈N(i)} x_j · Wl + b + x_i · Wr. Destinations are the
// prefix of the sources, so x_i is row i of the input.
type SAGEConv struct {
	In, Out int
	Wl, Wr  *Param
	B       *Param
	s       saved
}

// NewSAGEConv allocates a GraphSAGE layer with Glorot-initialized weights.
func NewSAGEConv(dev device.Device, name string, in, out int, r *rng.Rand) (*SAGEConv, error) {
	var ps []*Param
	for _, spec := range []struct {
		n     string
		rows  int
		decay bool
	}{{".lin_l.weight", in, true}, {".lin_r.weight", in, true}, {".bias", 1, false}} {
		p, err := newParam(dev, name+spec.n, spec.rows, out, spec.decay)
		if err != nil {
			for _, q := range ps {
				q.free(dev)
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	glorot(dev, ps[0], r)
	glorot(dev, ps[1], r)
	ps[0].Conv, ps[1].Conv = true, true
	return &SAGEConv{In: in, Out: out, Wl: ps[0], Wr: ps[1], B: ps[2]}, nil
}

// Dims returns the input and output widths.
func (l *SAGEConv) Dims() (int, int) { return l.In, l.Out }

// Params returns the neighbor weight, root weight and bias.
func (l *SAGEConv) Params() []*Param { return []*Param{l.Wl, l.Wr, l.B} }

func (l *SAGEConv) transformFirst() bool { return l.In > l.Out }

// Forward computes mean(x_N(i)) Wl + x_i Wr + b.
func (l *SAGEConv) Forward(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Cols != l.In || x.Rows != blk.NumSrc {
		return nil, fmt.Errorf("sage: input %s, block has %d sources, layer expects %d columns", x.Shape(), blk.NumSrc, l.In)
	}
	dev := c.Dev
	y, err := dev.Alloc(blk.NumDst, l.Out)
	if err != nil {
		return nil, err
	}
	var mid *tensor.Tensor
	if l.transformFirst() {
		// mean is linear: mean(X) Wl = mean(X Wl).
		if mid, err = dev.Alloc(blk.NumSrc, l.Out); err != nil {
			dev.Free(y)
			return nil, err
		}
		dev.Gemm(false, false, 1, x, l.Wl.W, 0, mid)
		dev.SpMM(y, blk, mid, device.AggMean)
		dev.Free(mid)
		mid = nil
	} else {
		if mid, err = dev.Alloc(blk.NumDst, l.In); err != nil {
			dev.Free(y)
			return nil, err
		}
		dev.SpMM(mid, blk, x, device.AggMean)
		dev.Gemm(false, false, 1, mid, l.Wl.W, 0, y)
	}
	dev.Gemm(false, false, 1, x.RowSlice(0, blk.NumDst), l.Wr.W, 1, y)
	dev.AddBias(y, l.B.W)
	l.s.keep(c, blk, x, mid)
	return y, nil
}

// Backward sets the gradients of Wl, Wr and b and returns dX.
func (l *SAGEConv) Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error) {
	if !l.s.live {
		return nil, fmt.Errorf("sage: backward without a training forward")
	}
	defer l.s.release(c)
	dev, blk, x := c.Dev, l.s.blk, l.s.x
	xd := x.RowSlice(0, blk.NumDst)
	dev.SumRows(l.B.G, dy)
	dev.Gemm(true, false, 1, xd, dy, 0, l.Wr.G)
	dx, err := l.s.backwardAggLinear(dev, dy, l.Wl, device.AggMean, l.transformFirst(), needDX)
	if err != nil || dx == nil {
		return nil, err
	}
	// Root term: dX[:NumDst] += dy Wrᵀ.
	dev.Gemm(false, true, 1, dy, l.Wr.W, 1, dx.RowSlice(0, blk.NumDst))
	return dx, nil
}

// Release frees state kept for a backward pass that will not come.
func (l *SAGEConv) Release(c *Context) { l.s.release(c) }

// AggregatesFirst reports whether Forward aggregates before multiplying.
func (l *SAGEConv) AggregatesFirst() bool { return !l.transformFirst() }

// Aggregate returns the mean of the neighbors' rows over blk.
func (l *SAGEConv) Aggregate(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error) {
	return aggregateBlock(c, blk, x, device.AggMean)
}

// FromAggregate returns agg·Wl + xdst·Wr + b.
func (l *SAGEConv) FromAggregate(c *Context, agg, xdst *tensor.Tensor) (*tensor.Tensor, error) {
	y, err := c.Dev.Alloc(agg.Rows, l.Out)
	if err != nil {
		return nil, err
	}
	l.fromAggregateInto(c, agg, xdst, y)
	return y, nil
}

// fromAggregateInto is FromAggregate writing into y (agg.Rows×Out).
func (l *SAGEConv) fromAggregateInto(c *Context, agg, xdst, y *tensor.Tensor) {
	c.Dev.Gemm(false, false, 1, agg, l.Wl.W, 0, y)
	c.Dev.Gemm(false, false, 1, xdst, l.Wr.W, 1, y)
	c.Dev.AddBias(y, l.B.W)
}
