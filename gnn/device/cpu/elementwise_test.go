package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/rng/philox"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

var elemShapes = [][2]int{{0, 5}, {1, 1}, {3, 7}, {31, 17}, {1000, 97}}

// forThreads runs fn with a fresh device per thread count and checks that
// the tensor it returns is bit-identical across thread counts.
func forThreads(t *testing.T, name string, fn func(d *Device) []float32) {
	t.Helper()
	var first []float32
	for _, th := range testThreads {
		got := fn(New(th, 0))
		if first == nil {
			first = got
		} else if !sameBits(first, got) {
			t.Fatalf("%s: threads=%d differs from threads=1", name, th)
		}
	}
}

func TestElementwise(t *testing.T) {
	r := rng.New(7)
	for _, sh := range elemShapes {
		rows, cols := sh[0], sh[1]
		h := New(1, 0)
		x := randTensor(t, h, r, rows, cols)
		y := randTensor(t, h, r, rows, cols)
		bias := randTensor(t, h, r, 1, cols)
		n := rows * cols
		ref := func(f func(i int) float64) []float64 {
			w := make([]float64, n)
			for i := range w {
				w[i] = f(i)
			}
			return w
		}
		X := func(i int) float64 { return float64(x.Data[i]) }
		Y := func(i int) float64 { return float64(y.Data[i]) }
		cases := []struct {
			name string
			run  func(d *Device, out *tensor.Tensor)
			want []float64
		}{
			{"Mul", func(d *Device, o *tensor.Tensor) { d.Mul(o, x, y) }, ref(func(i int) float64 { return X(i) * Y(i) })},
			{"Add", func(d *Device, o *tensor.Tensor) { d.Add(o, x, y) }, ref(func(i int) float64 { return X(i) + Y(i) })},
			{"Axpy", func(d *Device, o *tensor.Tensor) { d.Copy(o, y); d.Axpy(-1.5, x, o) }, ref(func(i int) float64 { return Y(i) - 1.5*X(i) })},
			{"Scale", func(d *Device, o *tensor.Tensor) { d.Copy(o, x); d.Scale(0.3, o) }, ref(func(i int) float64 { return 0.3 * X(i) })},
			{"Relu", func(d *Device, o *tensor.Tensor) { d.Relu(o, x) }, ref(func(i int) float64 { return math.Max(X(i), 0) })},
			{"ReluInPlace", func(d *Device, o *tensor.Tensor) { d.Copy(o, x); d.Relu(o, o) }, ref(func(i int) float64 { return math.Max(X(i), 0) })},
			{"ReluBackward", func(d *Device, o *tensor.Tensor) { d.ReluBackward(o, y, x) }, ref(func(i int) float64 {
				if X(i) > 0 {
					return Y(i)
				}
				return 0
			})},
			{"ReluBackwardInPlace", func(d *Device, o *tensor.Tensor) { d.Copy(o, y); d.ReluBackward(o, o, x) }, ref(func(i int) float64 {
				if X(i) > 0 {
					return Y(i)
				}
				return 0
			})},
			{"AddBias", func(d *Device, o *tensor.Tensor) { d.Copy(o, x); d.AddBias(o, bias) }, ref(func(i int) float64 { return X(i) + float64(bias.Data[i%cols]) })},
			{"Zero", func(d *Device, o *tensor.Tensor) { d.Zero(o) }, make([]float64, n)},
			{"CopyFromHost", func(d *Device, o *tensor.Tensor) { d.CopyFromHost(o, x.Data) }, ref(X)},
			{"CopyToHost", func(d *Device, o *tensor.Tensor) { d.CopyToHost(o.Data, x) }, ref(X)},
		}
		for _, c := range cases {
			name := fmt.Sprintf("%s/%dx%d", c.name, rows, cols)
			forThreads(t, name, func(d *Device) []float32 {
				o := randTensor(t, d, r, rows, cols)
				c.run(d, o)
				checkClose(t, name, o.Data, c.want, nil)
				return o.Data
			})
		}
		// Aliasing: dst == a for Mul and Add.
		o := clone(t, h, x)
		h.Mul(o, o, y)
		checkClose(t, "Mul alias", o.Data, ref(func(i int) float64 { return X(i) * Y(i) }), nil)
		o = clone(t, h, x)
		h.Add(o, y, o)
		checkClose(t, "Add alias", o.Data, ref(func(i int) float64 { return X(i) + Y(i) }), nil)
	}
}

func TestSumRows(t *testing.T) {
	r := rng.New(8)
	for _, sh := range [][2]int{{0, 3}, {1, 1}, {7, 5}, {257, 3}, {3000, 41}} {
		rows, cols := sh[0], sh[1]
		dy := randTensor(t, New(1, 0), r, rows, cols)
		want := make([]float64, cols)
		scale := make([]float64, cols)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				want[j] += float64(dy.Data[i*cols+j])
				scale[j] += math.Abs(float64(dy.Data[i*cols+j]))
			}
		}
		forThreads(t, fmt.Sprintf("SumRows %v", sh), func(d *Device) []float32 {
			db := randTensor(t, d, r, 1, cols)
			d.SumRows(db, dy)
			checkClose(t, fmt.Sprintf("SumRows %v", sh), db.Data, want, scale)
			return db.Data
		})
	}
}

func TestDropoutMask(t *testing.T) {
	for _, sh := range [][2]int{{0, 3}, {1, 1}, {5, 3}, {63, 7}, {1000, 129}} {
		for _, p := range []float32{0, 0.1, 0.5, 0.9, 1} {
			name := fmt.Sprintf("%v/p=%v", sh, p)
			var first []float32
			forThreads(t, name, func(d *Device) []float32 {
				m := randTensor(t, d, rng.New(9), sh[0], sh[1])
				d.DropoutMask(m, p, 42)
				keep := float32(1 / (1 - float64(p)))
				zeros := 0
				for _, v := range m.Data {
					switch {
					case v == 0:
						zeros++
					case p < 1 && v == keep:
					default:
						t.Fatalf("%s: mask value %v", name, v)
					}
				}
				if n := len(m.Data); n > 10000 {
					if frac := float64(zeros) / float64(n); math.Abs(frac-float64(p)) > 0.01 {
						t.Fatalf("%s: dropped fraction %v", name, frac)
					}
				}
				if first == nil {
					first = m.Data
				}
				return m.Data
			})
			if len(first) > 100 && p > 0 && p < 1 {
				m := mustAlloc(t, New(2, 0), sh[0], sh[1])
				New(2, 0).DropoutMask(m, p, 43)
				if sameBits(first, m.Data) {
					t.Fatalf("%s: another seed gave the same mask", name)
				}
			}
		}
	}
}

// TestDropoutMaskPhilox checks the mask against its definition, element by
// element: element i is dropped when the top 24 bits of word i of the
// Philox4x32-10 stream of the seed, as a fraction of 2^24, are below p.
// With two threads, 513×517 elements split into parallel ranges of 33153
// elements, which start and end inside Philox blocks.
func TestDropoutMaskPhilox(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {3, 5}, {257, 129}, {513, 517}} {
		for _, p := range []float32{0.1, 0.5, 1.0 / 3, 0.9} {
			for _, seed := range []uint64{0, 42, 1<<63 + 12345} {
				for _, th := range testThreads {
					d := New(th, 0)
					m := mustAlloc(t, d, sh[0], sh[1])
					d.DropoutMask(m, p, seed)
					keep := 1 / (1 - p)
					for i, v := range m.Data {
						u := philox.At(seed, uint64(i)) >> 8
						want := keep
						if float32(u)/(1<<24) < p {
							want = 0
						}
						if math.Float32bits(v) != math.Float32bits(want) {
							t.Fatalf("%v p=%v seed=%d threads=%d: element %d = %v, want %v", sh, p, seed, th, i, v, want)
						}
					}
				}
			}
		}
	}
}
