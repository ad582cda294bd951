package device

import (
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Agg selects how SpMM combines a destination's incoming messages.
type Agg int

const (
	// AggSum adds the source rows.
	AggSum Agg = iota
	// AggMean averages the source rows (an empty row yields zeros).
	AggMean
	// AggWeighted adds the source rows scaled by Block.Weights.
	AggWeighted
)

// String names the aggregation.
func (a Agg) String() string {
	switch a {
	case AggSum:
		return "sum"
	case AggMean:
		return "mean"
	case AggWeighted:
		return "weighted"
	}
	return "unknown"
}

// Device is a compute backend. Tensors passed to a device's methods must have
// been allocated by that device (or be views of such tensors). Shapes are
// the caller's responsibility; backends may panic on mismatched shapes,
// which are programming errors, never user input. Allocation failures are
// errors (*OOMError past the budget).
type Device interface {
	// Name identifies the device ("cpu", "cuda:0").
	Name() string
	// Mem is the allocator that accounts every buffer of this device.
	Mem() *Allocator
	// Alloc returns a zero-filled rows×cols tensor.
	Alloc(rows, cols int) (*tensor.Tensor, error)
	// Free releases t's storage; views are ignored. t must not be used after.
	Free(t *tensor.Tensor)
	// Sync waits for all queued work (a no-op on synchronous backends).
	Sync()

	// CopyFromHost copies len(src) == dst.Len() values into dst.
	CopyFromHost(dst *tensor.Tensor, src []float32)
	// CopyToHost copies src into dst (len(dst) == src.Len()).
	CopyToHost(dst []float32, src *tensor.Tensor)
	// Copy copies src into dst (same shape).
	Copy(dst, src *tensor.Tensor)
	// Zero fills t with zeros.
	Zero(t *tensor.Tensor)

	// GatherHost sets dst row i to row idx[i] of the host matrix src
	// (row length dst.Cols). This is how features reach the device.
	GatherHost(dst *tensor.Tensor, src []float32, idx []int32)
	// Gather sets dst row i to src row idx[i].
	Gather(dst, src *tensor.Tensor, idx []int32)
	// GatherRows sets dst row pos[i] to src row idx[i] (a batch's
	// feature cache hits); GatherHostRows sets it to row idx[i] of the
	// host matrix src (the misses, which cross to the device).
	GatherRows(dst *tensor.Tensor, pos []int32, src *tensor.Tensor, idx []int32)
	GatherHostRows(dst *tensor.Tensor, pos []int32, src []float32, idx []int32)
	// ScatterAdd adds src row i into dst row idx[i].
	ScatterAdd(dst, src *tensor.Tensor, idx []int32)

	// Gemm computes C = alpha*op(A)*op(B) + beta*C where op transposes
	// when the flag is set. With beta == 0, C's old contents are ignored.
	Gemm(transA, transB bool, alpha float32, a, b *tensor.Tensor, beta float32, c *tensor.Tensor)
	// SpMM sets out (NumDst×C) row i to the aggregation of x (NumSrc×C)
	// rows over block row i.
	SpMM(out *tensor.Tensor, blk *graph.Block, x *tensor.Tensor, agg Agg)
	// SpMMT is SpMM's adjoint: it sets dx (NumSrc×C) to the gradient of
	// the loss with respect to x given dout (NumDst×C).
	SpMMT(dx *tensor.Tensor, blk *graph.Block, dout *tensor.Tensor, agg Agg)

	// AddBias adds the 1×C row b to every row of x, in place.
	AddBias(x, b *tensor.Tensor)
	// SumRows sets db (1×C) to the column sums of dy (the bias gradient).
	SumRows(db, dy *tensor.Tensor)
	// Relu sets y = max(x, 0); y may be x.
	Relu(y, x *tensor.Tensor)
	// ReluBackward sets dx = dy where y > 0, else 0; dx may be dy.
	ReluBackward(dx, dy, y *tensor.Tensor)
	// DropoutMask fills mask with 0 (probability p) or 1/(1-p), drawn
	// deterministically from seed.
	DropoutMask(mask *tensor.Tensor, p float32, seed uint64)
	// Mul sets dst = a ⊙ b elementwise; dst may alias a or b.
	Mul(dst, a, b *tensor.Tensor)
	// Add sets dst = a + b elementwise; dst may alias a or b.
	Add(dst, a, b *tensor.Tensor)
	// Axpy sets y += alpha*x.
	Axpy(alpha float32, x, y *tensor.Tensor)
	// Scale sets x *= alpha.
	Scale(alpha float32, x *tensor.Tensor)

	// SoftmaxCrossEntropy computes the mean negative log-likelihood of
	// labels under log-softmax(logits) over the rows, writes the gradient
	// of that mean into grad (may be nil) and returns the loss and the
	// number of rows whose argmax equals the label.
	SoftmaxCrossEntropy(logits *tensor.Tensor, labels []int32, grad *tensor.Tensor) (loss float64, correct int)
	// Argmax writes each row's index of the largest value into dst.
	Argmax(dst []int32, x *tensor.Tensor)
	// Adam applies one Adam step (step counts from 1) with L2 weight decay
	// added to the gradient, as torch.optim.Adam does.
	Adam(param, grad, m, v *tensor.Tensor, step int, lr, beta1, beta2, eps, weightDecay float32)
}
