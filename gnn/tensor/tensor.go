package tensor

import "fmt"

// Tensor is a Rows×Cols float32 matrix in row-major order.
type Tensor struct {
	Rows, Cols int
	// Data is the host-addressable storage (CPU backend). Nil for tensors
	// that live in accelerator memory.
	Data []float32
	// Handle is backend-specific storage (for example a CUDA device pointer).
	Handle any
	// View marks a tensor that shares another tensor's storage; freeing a
	// view releases nothing.
	View bool
	// Off is the element offset of a view into its parent's storage
	// (used by backends whose storage is not a Go slice).
	Off int
}

// Len returns Rows*Cols.
func (t *Tensor) Len() int { return t.Rows * t.Cols }

// Bytes returns the tensor's size in bytes.
func (t *Tensor) Bytes() int64 { return int64(t.Rows) * int64(t.Cols) * 4 }

// Shape formats the shape for error messages.
func (t *Tensor) Shape() string { return fmt.Sprintf("%dx%d", t.Rows, t.Cols) }

// Row returns row i of a host tensor.
func (t *Tensor) Row(i int) []float32 { return t.Data[i*t.Cols : (i+1)*t.Cols] }

// RowSlice returns a view of rows [lo, hi) sharing t's storage.
func (t *Tensor) RowSlice(lo, hi int) *Tensor {
	if lo < 0 || hi > t.Rows || lo > hi {
		panic(fmt.Sprintf("tensor: row slice [%d,%d) of %s", lo, hi, t.Shape()))
	}
	v := &Tensor{Rows: hi - lo, Cols: t.Cols, Handle: t.Handle, View: true, Off: t.Off + lo*t.Cols}
	if t.Data != nil {
		v.Data = t.Data[lo*t.Cols : hi*t.Cols]
	}
	return v
}

// SameShape reports whether a and b have equal shapes.
func SameShape(a, b *Tensor) bool { return a.Rows == b.Rows && a.Cols == b.Cols }
