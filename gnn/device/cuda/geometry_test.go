package cuda

import (
	"math"
	"testing"
)

func TestGridBlocks(t *testing.T) {
	for _, c := range []struct {
		n, per int64
		max    int
		want   int
	}{
		{0, 256, 100, 1}, {1, 256, 100, 1}, {256, 256, 100, 1}, {257, 256, 100, 2},
		{1 << 30, 256, 4224, 4224}, {1000, 8, 1000, 125},
	} {
		if got := gridBlocks(c.n, c.per, c.max); got != c.want {
			t.Errorf("gridBlocks(%d, %d, %d) = %d, want %d", c.n, c.per, c.max, got, c.want)
		}
	}
	if warpGrid(9, 100) != 2 || elemGrid(513, 100) != 3 {
		t.Fatal("warp or element grid")
	}
}

// TestPlanGemmCovers checks that the tiles cover C and the K slices cover K
// exactly once, in multiples of the K tile, for shapes around every
// threshold.
func TestPlanGemmCovers(t *testing.T) {
	for _, m := range []int{1, 63, 64, 65, 256, 1000} {
		for _, n := range []int{1, 64, 65, 256} {
			for _, k := range []int{1, 16, 4095, 4096, 4097, 100_000, 10_000_000} {
				p := planGemm(m, n, k)
				if p.gridX*gemmBN < n || (p.gridX-1)*gemmBN >= n || p.gridY*gemmBM < m || (p.gridY-1)*gemmBM >= m {
					t.Fatalf("%dx%dx%d: grid %dx%d does not tile C", m, n, k, p.gridX, p.gridY)
				}
				if p.splits == 1 {
					if p.workspace(m, n) != 0 {
						t.Fatalf("%dx%dx%d: workspace without a split", m, n, k)
					}
					continue
				}
				if p.kchunk%gemmBK != 0 || p.splits > splitMaxSplits || p.splits*p.kchunk < k || (p.splits-1)*p.kchunk >= k {
					t.Fatalf("%dx%dx%d: %d splits of %d do not cover K", m, n, k, p.splits, p.kchunk)
				}
				if k < splitMinK || p.gridX*p.gridY > splitMaxTiles {
					t.Fatalf("%dx%dx%d: split although not needed", m, n, k)
				}
				if p.workspace(m, n) != int64(p.splits)*int64(m)*int64(n) {
					t.Fatalf("workspace %d", p.workspace(m, n))
				}
			}
		}
	}
	// A weight gradient over a large batch is split; a square product is not.
	if p := planGemm(256, 64, 100_000); p.splits != 49 || p.kchunk != 2048 {
		t.Fatalf("256x64x100000: %+v", p)
	}
	if p := planGemm(4096, 4096, 4096); p.splits != 1 {
		t.Fatalf("4096^3: %+v", p)
	}
}

// TestGemmStripFitsGrid checks that a strip of gemmStripRows rows, the
// most one gemm launch covers, needs no more tiles along M than a grid's y
// dimension holds, and that one row more would.
func TestGemmStripFitsGrid(t *testing.T) {
	if p := planGemm(gemmStripRows, 64, 64); p.gridY > maxGridY {
		t.Fatalf("a strip of %d rows needs %d tiles along M (at most %d)", gemmStripRows, p.gridY, maxGridY)
	}
	if p := planGemm(gemmStripRows+1, 64, 64); p.gridY <= maxGridY {
		t.Fatalf("strips of %d rows are shorter than a grid allows", gemmStripRows)
	}
}

func TestSumRowsGridAndChunks(t *testing.T) {
	if gx, gy := sumRowsGrid(1000, 64); gx != 1 || gy != 4 {
		t.Fatalf("sumRowsGrid(1000, 64) = %d, %d", gx, gy)
	}
	if _, gy := sumRowsGrid(100_000_000, 8); gy != maxGridY {
		t.Fatalf("y not capped: %d", gy)
	}
	if dropoutGrid(0, 8) != 1 || dropoutGrid(1024, 8) != 1 || dropoutGrid(1025, 8) != 2 || dropoutGrid(1<<30, 8) != 8 {
		t.Fatal("dropout grid")
	}
}

// TestDropoutThresh checks the threshold against the definition: u < t
// exactly when float32(u)/2^24 < p, at the boundary values.
func TestDropoutThresh(t *testing.T) {
	for _, p := range []float32{1e-9, 0.1, 0.25, 0.5, 0.6, 1.0 / 3, 0.999999} {
		th := dropoutThresh(p)
		for _, u := range []uint32{th - 1, th} {
			below := float32(u)/(1<<24) < p
			if below != (u < th) {
				t.Fatalf("p %v: thresh %d disagrees at u %d", p, th, u)
			}
		}
		if math.Abs(float64(th)/(1<<24)-float64(p)) > 1.0/(1<<24) {
			t.Fatalf("p %v: thresh %d far from p", p, th)
		}
	}
}

func TestKargsEncoding(t *testing.T) {
	var a kargs
	a.ptr(0xdeadbeef).i32(-2).i64(-3).f32(1.5).f64(-0.25).u32(7).u64(1 << 40)
	want := []uint64{0xdeadbeef, 0xfffffffe, 0xfffffffffffffffd, uint64(math.Float32bits(1.5)), math.Float64bits(-0.25), 7, 1 << 40}
	l := a.values()
	if len(l) != len(want) {
		t.Fatalf("%d args", len(l))
	}
	for i, got := range l {
		if got != want[i] {
			t.Fatalf("arg %d = %#x, want %#x", i, got, want[i])
		}
	}
	// An int's low 32 bits, read as the kernel's 4-byte int, is the value.
	if int32(uint32(a.vals[1])) != -2 {
		t.Fatal("int32 encoding")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an int argument out of range must panic")
		}
	}()
	a.i32(1 << 40)
}

// TestIndex32 checks that the 32-bit index path covers every array below
// 2^31 elements at any grid the launch geometry makes (at most maxGridY
// blocks even on a GPU with thousands of multiprocessors), and that it is
// left exactly where an index plus the stride could wrap.
func TestIndex32(t *testing.T) {
	n := int64(math.MaxInt32)
	if g := elemGrid(n, maxGridY); !index32(n, g) {
		t.Fatalf("%d elements, grid %d: 64-bit indices", n, g)
	}
	stride := int64(maxGridY) * blockThreads
	if !index32(math.MaxUint32-stride, maxGridY) || index32(math.MaxUint32-stride+1, maxGridY) {
		t.Fatal("index32 boundary")
	}
}
