package nn

import (
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
// every evaluation.
type Precomputable interface {
	// AggregatesFirst reports whether Forward aggregates the input before
	// transforming it (otherwise the aggregation depends on the weights).
	AggregatesFirst() bool
	// Aggregate returns the aggregation of x over blk (NumDst×In); the
	// caller owns it.
	Aggregate(c *Context, blk *graph.Block, x *tensor.Tensor) (*tensor.Tensor, error)
	// FromAggregate returns the layer's output from an aggregate and the
	// destinations' own input rows xdst (NumDst×In), as Forward would in
	// evaluation mode; the caller owns it.
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
