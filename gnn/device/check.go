package device

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// GemmDims returns the dimensions of the product Gemm computes, op(A) m×k
// times op(B) k×n into C m×n, where op transposes when its flag is set. It
// panics, naming backend, when the shapes do not agree: every backend's
// Gemm checks its operands the same way.
func GemmDims(backend Kind, transA, transB bool, a, b, c *tensor.Tensor) (m, n, k int) {
	m, k = a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if kb != k || c.Rows != m || c.Cols != n {
		panic(fmt.Sprintf("%s: Gemm: op(A) %dx%d, op(B) %dx%d, C %s", backend, m, k, kb, n, c.Shape()))
	}
	return m, n, k
}

// MustSameShape panics, naming backend and op, when a and b differ in
// shape.
func MustSameShape(backend Kind, op string, a, b *tensor.Tensor) {
	if !tensor.SameShape(a, b) {
		panic(fmt.Sprintf("%s: %s: shapes %s and %s differ", backend, op, a.Shape(), b.Shape()))
	}
}

// CheckAdam panics, naming backend, when Adam's arguments disagree: the
// gradient and both moments must have the parameter's shape and steps
// count from 1.
func CheckAdam(backend Kind, param, grad, m, v *tensor.Tensor, step int) {
	MustSameShape(backend, "Adam", param, grad)
	MustSameShape(backend, "Adam", param, m)
	MustSameShape(backend, "Adam", param, v)
	if step < 1 {
		panic(fmt.Sprintf("%s: Adam: step %d (steps count from 1)", backend, step))
	}
}
