package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// refGemm returns alpha*op(A)*op(B) + beta*C in float64 and the magnitude
// scale |alpha|*|op(A)|*|op(B)| + |beta*C| of every element.
func refGemm(transA, transB bool, alpha float32, a, b *tensor.Tensor, beta float32, c []float32, m, n, k int) (want, scale []float64) {
	at := func(i, p int) float64 {
		if transA {
			return float64(a.Data[p*a.Cols+i])
		}
		return float64(a.Data[i*a.Cols+p])
	}
	bt := func(p, j int) float64 {
		if transB {
			return float64(b.Data[j*b.Cols+p])
		}
		return float64(b.Data[p*b.Cols+j])
	}
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, sa float64
			for p := 0; p < k; p++ {
				s += at(i, p) * bt(p, j)
				sa += math.Abs(at(i, p) * bt(p, j))
			}
			w := float64(alpha) * s
			sc := math.Abs(float64(alpha)) * sa
			if beta != 0 {
				w += float64(beta) * float64(c[i*n+j])
				sc += math.Abs(float64(beta) * float64(c[i*n+j]))
			}
			want[i*n+j], scale[i*n+j] = w, sc
		}
	}
	return want, scale
}

var gemmShapes = [][3]int{
	{1, 1, 1}, {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {2, 3, 5}, {7, 13, 11},
	{17, 19, 23}, {33, 5, 257}, {97, 64, 101}, {131, 67, 300}, {5, 300, 9},
	{200, 17, 520}, {301, 130, 70},
	// More than one pass over k: only the first may store into C.
	{37, 45, 2*gemmKC + 3}, {13, 33, gemmKC},
}

// kernelsUnderTest are all the micro-kernels this machine runs, those
// with a direct variant (A read in place) twice: with and without it.
func kernelsUnderTest() []microKernel {
	var ks []microKernel
	for _, k := range availableKernels {
		if k.direct != nil {
			packed := k
			packed.name += "-packed"
			packed.direct = nil
			ks = append(ks, packed)
		}
		ks = append(ks, k)
	}
	return ks
}

// splitSmall makes even tiny products split into several tasks.
func splitSmall(t *testing.T) {
	old := gemmTaskFlops
	gemmTaskFlops = 1
	t.Cleanup(func() { gemmTaskFlops = old })
}

func TestGemm(t *testing.T) {
	splitSmall(t)
	r := rng.New(1)
	for _, kern := range kernelsUnderTest() {
		for _, sh := range gemmShapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}, {2, 0.25}, {0, 3}} {
					name := fmt.Sprintf("%s/%dx%dx%d/tA=%v,tB=%v/alpha=%v,beta=%v", kern.name, m, n, k, tr[0], tr[1], ab[0], ab[1])
					testGemmCase(t, name, r, kern, m, n, k, tr[0], tr[1], ab[0], ab[1])
				}
			}
		}
	}
}

func testGemmCase(t *testing.T, name string, r *rng.Rand, kern microKernel, m, n, k int, transA, transB bool, alpha, beta float32) {
	d := New(1, 0)
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	a := randTensor(t, d, r, ar, ac)
	b := randTensor(t, d, r, br, bc)
	c0 := randTensor(t, d, r, m, n)
	if beta == 0 {
		for i := range c0.Data {
			c0.Data[i] = float32(math.NaN()) // must be ignored
		}
	}
	want, scale := refGemm(transA, transB, alpha, a, b, beta, c0.Data, m, n, k)
	var first []float32
	for _, th := range testThreads {
		dd := New(th, 0)
		c := clone(t, d, c0)
		op := gemmOp{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha,
			a: a.Data, lda: a.Cols, b: b.Data, ldb: b.Cols, c: c.Data, ldc: c.Cols}
		dd.gemm(&op, beta, kern)
		checkClose(t, fmt.Sprintf("%s/threads=%d", name, th), c.Data, want, scale)
		if first == nil {
			first = c.Data
		} else if !sameBits(first, c.Data) {
			t.Fatalf("%s: threads=%d differs from threads=1", name, th)
		}
	}
}

// TestGemmPublic goes through the Device method (active kernel).
func TestGemmPublic(t *testing.T) {
	r := rng.New(2)
	d := New(2, 0)
	a := randTensor(t, d, r, 70, 40)
	b := randTensor(t, d, r, 50, 40)
	c := mustAlloc(t, d, 70, 50)
	d.Gemm(false, true, 1, a, b, 0, c)
	want, scale := refGemm(false, true, 1, a, b, 0, nil, 70, 50, 40)
	checkClose(t, "A·Bᵀ", c.Data, want, scale)
	// Row-slice views work as operands.
	av := a.RowSlice(10, 30)
	cv := c.RowSlice(5, 25)
	d.Gemm(false, true, 1, av, b, 0, cv)
	want, scale = refGemm(false, true, 1, av, b, 0, nil, 20, 50, 40)
	checkClose(t, "view", cv.Data, want, scale)
	defer func() {
		if recover() == nil {
			t.Fatal("mismatched shapes did not panic")
		}
	}()
	d.Gemm(false, false, 1, a, b, 0, c)
}

// TestGemmLarge crosses every cache block boundary once with two threads.
func TestGemmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	splitSmall(t)
	r := rng.New(3)
	m, n, k := gemmMC*2+7, gemmNC+13, gemmKC+5
	for _, kern := range kernelsUnderTest() {
		testGemmCase(t, kern.name+"/large", r, kern, m, n, k, false, false, 1, 0.5)
		testGemmCase(t, kern.name+"/largeT", r, kern, 9, 300, 2*gemmKC+3, true, false, 1, 0)
		// Direct path: several blocks of rows, passes along k and a column
		// edge; and an op(B) too deep for it to pack at once.
		testGemmCase(t, kern.name+"/direct", r, kern, 2*gemmDirectMC+11, 70, gemmKC+9, false, false, 1, 0)
		testGemmCase(t, kern.name+"/directT", r, kern, gemmDirectMC+5, 40, 2*gemmKC+1, false, true, 1, 0.5)
		testGemmCase(t, kern.name+"/deep", r, kern, 20, gemmNC+8, gemmKC+1, false, false, 1, 0)
		// Tall and narrow: the tasks split only the rows and share one
		// op(B), packed by all threads (several passes, a column edge).
		testGemmCase(t, kern.name+"/directShared", r, kern, 600, 40, 2*gemmKC+37, false, false, 1, 0.5)
		// Narrow and too deep for the direct path as a whole, but not for
		// a task's share of the columns: both paths must sum along k in
		// the same passes.
		testGemmCase(t, kern.name+"/narrowDeep", r, kern, 13, 64, 5000, false, false, 1, 0)
		// Long inner dimension: split along k (see kSplitChunks).
		k := 4*kSplitChunk + 77
		if nch, _ := kSplitChunks(13, 37, k); nch < 4 {
			t.Fatal("k split not taken")
		}
		testGemmCase(t, kern.name+"/ksplit", r, kern, 13, 37, k, true, false, 1, 0.5)
		testGemmCase(t, kern.name+"/ksplitT", r, kern, 13, 37, k, false, true, -1, 0)
	}
}

// TestKSplitChunks checks that the k chunks cover k, none empty, in a count
// that two and four threads share evenly.
func TestKSplitChunks(t *testing.T) {
	for _, k := range []int{4*kSplitChunk + 77, 100000, 13*kSplitChunk - 1, 40*kSplitChunk + 5} {
		nch, chunk := kSplitChunks(256, 256, k)
		if nch < 4 || nch%4 != 0 || (nch-1)*chunk >= k || nch*chunk < k {
			t.Errorf("k=%d: %d chunks of %d", k, nch, chunk)
		}
	}
	if nch, chunk := kSplitChunks(256, 256, 2*kSplitChunk); nch != 1 || chunk != 2*kSplitChunk {
		t.Errorf("short k split into %d chunks of %d", nch, chunk)
	}
}

// TestPackRows checks the packing routine against a loop at every width it
// takes, and that it declines the others.
func TestPackRows(t *testing.T) {
	src := make([]float32, 40*50)
	for i := range src {
		src[i] = float32(i)
	}
	for _, width := range []int{6, 12, 16, 32} {
		for _, rows := range []int{0, 1, 7} {
			dst := make([]float32, rows*width+1)
			dst[len(dst)-1] = -1
			if !packRows(dst, src[3:], 50, rows, width) {
				if hasPackAsm {
					t.Fatalf("width %d: declined", width)
				}
				continue
			}
			for p := range rows {
				for i := range width {
					if dst[p*width+i] != src[3+p*50+i] {
						t.Fatalf("width %d rows %d: dst[%d][%d] = %v", width, rows, p, i, dst[p*width+i])
					}
				}
			}
			if dst[len(dst)-1] != -1 {
				t.Fatalf("width %d rows %d: wrote past the end", width, rows)
			}
		}
	}
	if packRows(make([]float32, 64), src, 50, 2, 8) {
		t.Fatal("width 8 taken")
	}
}
