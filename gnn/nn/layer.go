package nn

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Layer is one message-passing layer. Forward maps the block's source rows
// x (NumSrc×In) to destination rows (NumDst×Out), returning a tensor the
// caller owns. In training mode it keeps what Backward needs (x must stay
// alive until then); Backward takes the gradient of the output, sets the
// parameters' gradients, frees the kept state and returns the gradient of x
// (nil when needDX is false). Release frees kept state when no backward
// follows.
type Layer interface {
	Forward(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error)
	Backward(c *Context, dy *tensor.Tensor, needDX bool) (*tensor.Tensor, error)
	Release(c *Context)
	Params() []*Param
	Dims() (in, out int)
}

// Precomputable is implemented by layers that can split inference into an
// aggregation that depends only on the input (not on the weights) and a
// transform of that aggregate. When the input never changes (raw features
// in the first layer), the aggregation can be computed once and reused by
// every evaluation, whichever order Forward takes: the transform is
// linear, so the two orders differ only in the rounding of their sums.
type Precomputable interface {
	// AggregatesFirst reports whether Forward aggregates the input before
	// transforming it (otherwise the aggregation depends on the weights).
	AggregatesFirst() bool
	// Aggregate returns the aggregation of x over blk (NumDst×In); the
	// caller owns it.
	Aggregate(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error)
	// FromAggregate returns the layer's output from an aggregate and the
	// destinations' own input rows xdst (NumDst×In; nil for a layer whose
	// UsesRoot is false), as Forward would in evaluation mode (exactly
	// when AggregatesFirst, else up to rounding); the caller owns it.
	FromAggregate(c *Context, agg, xdst *tensor.Tensor) (*tensor.Tensor, error)
}

// saved is the state a layer keeps between forward and backward.
type saved struct {
	blk  *graph.Block
	x    *tensor.Tensor   // input (not owned)
	own  []*tensor.Tensor // intermediates owned by the layer
	live bool
}

func (s *saved) release(c *Context) {
	for _, t := range s.own {
		c.Dev.Free(t)
	}
	*s = saved{}
}

// keep saves blk and x for backward in training mode, taking ownership of
// mid when it is not nil; in evaluation mode it frees mid.
func (s *saved) keep(c *Context, blk *graph.Block, x, mid *tensor.Tensor) {
	if !c.Train {
		if mid != nil {
			c.Dev.Free(mid)
		}
		return
	}
	*s = saved{blk: blk, x: x, live: true}
	if mid != nil {
		s.own = []*tensor.Tensor{mid}
	}
}

// backwardAggLinear is the backward pass of y = A(X) W, where A aggregates
// over the saved block with agg and X is the saved input, computed as
// A(X W) when transformFirst is set and otherwise as (A X) W with A X kept
// in s.own[0]. It sets w.G and returns dX (nil when needDX is false), which
// the caller owns.
func (s *saved) backwardAggLinear(dev device.Device, dy *tensor.Tensor, w *Param, agg device.Agg, transformFirst, needDX bool) (*tensor.Tensor, error) {
	blk, x := s.blk, s.x
	in, out := w.W.Rows, w.W.Cols
	if transformFirst {
		// y = A (X W): dH = Aᵀ dy; dW = Xᵀ dH; dX = dH Wᵀ.
		dh, err := dev.Alloc(blk.NumSrc, out)
		if err != nil {
			return nil, err
		}
		defer dev.Free(dh)
		dev.SpMMT(dh, blk, dy, agg)
		dev.Gemm(true, false, 1, x, dh, 0, w.G)
		if !needDX {
			return nil, nil
		}
		dx, err := dev.Alloc(blk.NumSrc, in)
		if err != nil {
			return nil, err
		}
		dev.Gemm(false, true, 1, dh, w.W, 0, dx)
		return dx, nil
	}
	// y = (A X) W: dW = (AX)ᵀ dy; dA = dy Wᵀ; dX = Aᵀ dA.
	dev.Gemm(true, false, 1, s.own[0], dy, 0, w.G)
	if !needDX {
		return nil, nil
	}
	da, err := dev.Alloc(blk.NumDst, in)
	if err != nil {
		return nil, err
	}
	defer dev.Free(da)
	dev.Gemm(false, true, 1, dy, w.W, 0, da)
	dx, err := dev.Alloc(blk.NumSrc, in)
	if err != nil {
		return nil, err
	}
	dev.SpMMT(dx, blk, da, agg)
	return dx, nil
}

// aggregateBlock returns the aggregation of x over blk with agg
// (NumDst×x.Cols); the caller owns it.
func aggregateBlock(c *Context, blk *graph.Block, x *tensor.Tensor, agg device.Agg) (*tensor.Tensor, error) {
	a, err := c.Dev.Alloc(blk.NumDst, x.Cols)
	if err != nil {
		return nil, err
	}
	c.Dev.SpMM(a, blk, x, agg)
	return a, nil
}
