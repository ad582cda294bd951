package cpu

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// testThreads are the thread counts every kernel is checked with.
var testThreads = []int{1, 2, 3}

func mustAlloc(t testing.TB, d *Device, rows, cols int) *tensor.Tensor {
	t.Helper()
	x, err := d.Alloc(rows, cols)
	if err != nil {
		t.Fatalf("alloc %dx%d: %v", rows, cols, err)
	}
	return x
}

// randTensor allocates a rows×cols tensor of uniform values in [-1, 1).
func randTensor(t testing.TB, d *Device, r *rng.Rand, rows, cols int) *tensor.Tensor {
	t.Helper()
	x := mustAlloc(t, d, rows, cols)
	for i := range x.Data {
		x.Data[i] = 2*r.Float32() - 1
	}
	return x
}

func clone(t testing.TB, d *Device, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	y := mustAlloc(t, d, x.Rows, x.Cols)
	copy(y.Data, x.Data)
	return y
}

// randBlock returns a block with some empty rows, isolated sources,
// duplicate edges and, when weighted, random weights.
func randBlock(r *rng.Rand, numDst, numSrc int, weighted bool) *graph.Block {
	b := &graph.Block{NumDst: numDst, NumSrc: numSrc, Indptr: make([]int64, numDst+1)}
	for i := 0; i < numDst; i++ {
		deg := 0
		if numSrc > 0 && r.Intn(4) != 0 { // a quarter of the rows are empty
			deg = 1 + r.Intn(7)
		}
		for e := 0; e < deg; e++ {
			// Leave the last source isolated when there are several.
			s := r.Intn(max(numSrc-1, 1))
			b.Indices = append(b.Indices, int32(s))
			if e > 0 && r.Intn(5) == 0 { // duplicate edge
				b.Indices = append(b.Indices, int32(s))
			}
		}
		b.Indptr[i+1] = int64(len(b.Indices))
	}
	if weighted {
		b.Weights = make([]float32, len(b.Indices))
		for i := range b.Weights {
			b.Weights[i] = 2*r.Float32() - 0.5
		}
	}
	return b
}

// closeTo reports whether got matches want to a float32-appropriate
// tolerance relative to scale (the magnitude of the terms summed).
func closeTo(got float32, want, scale float64) bool {
	return math.Abs(float64(got)-want) <= 1e-5*(scale+math.Abs(want))+1e-6
}

func checkClose(t *testing.T, what string, got []float32, want, scale []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		s := 1.0
		if scale != nil {
			s = scale[i]
		}
		if !closeTo(got[i], want[i], s) {
			t.Fatalf("%s: element %d = %v, want %v (scale %v)", what, i, got[i], want[i], s)
		}
	}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
