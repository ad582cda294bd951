package hostmem

import "unsafe"

// Matrix is host memory for n float32 values, allocated by Alloc and
// released by Free.
type Matrix struct {
	// Data holds the values, zeroed by Alloc.
	Data   []float32
	mapped []byte // the mapping behind Data, nil when Data is in the Go heap
}

// Alloc returns a zeroed matrix of n values, mapped outside the Go heap
// where the system allows it, else (or for n under minMapped) from the
// heap.
func Alloc(n int) *Matrix {
	if n*4 >= minMapped {
		if b, err := mapAnon(n * 4); err == nil {
			return &Matrix{Data: unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), mapped: b}
		}
	}
	return &Matrix{Data: make([]float32, n)}
}

// Free returns m's memory: to the operating system at once when it was
// mapped, else to the garbage collector. m.Data, and every slice taken
// from it, must not be used afterwards. Freeing nil, or twice, does
// nothing.
func (m *Matrix) Free() error {
	if m == nil {
		return nil
	}
	b := m.mapped
	m.Data, m.mapped = nil, nil
	if b == nil {
		return nil
	}
	return unmap(b)
}

// Mapped reports whether m lies outside the Go heap.
func (m *Matrix) Mapped() bool { return m.mapped != nil }

// minMapped is the least size worth a mapping of its own: below it the
// heap's allocation is cheaper and its share of the collector's target
// small.
const minMapped = 1 << 20
