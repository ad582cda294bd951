package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// edgeWeight is the coefficient of edge e (into destination i) in SpMM.
func edgeWeight(blk *graph.Block, agg device.Agg, i int, e int64) float64 {
	switch agg {
	case device.AggMean:
		return 1 / float64(blk.Indptr[i+1]-blk.Indptr[i])
	case device.AggWeighted:
		if blk.Weights != nil {
			return float64(blk.Weights[e])
		}
	}
	return 1
}

func refSpMM(blk *graph.Block, x []float32, cols int, agg device.Agg) (want, scale []float64) {
	want = make([]float64, blk.NumDst*cols)
	scale = make([]float64, blk.NumDst*cols)
	for i := 0; i < blk.NumDst; i++ {
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			w := edgeWeight(blk, agg, i, e)
			s := int(blk.Indices[e])
			for j := 0; j < cols; j++ {
				want[i*cols+j] += w * float64(x[s*cols+j])
				scale[i*cols+j] += math.Abs(w * float64(x[s*cols+j]))
			}
		}
	}
	return want, scale
}

func refSpMMT(blk *graph.Block, dout []float32, cols int, agg device.Agg) (want, scale []float64) {
	want = make([]float64, blk.NumSrc*cols)
	scale = make([]float64, blk.NumSrc*cols)
	for i := 0; i < blk.NumDst; i++ {
		for e := blk.Indptr[i]; e < blk.Indptr[i+1]; e++ {
			w := edgeWeight(blk, agg, i, e)
			s := int(blk.Indices[e])
			for j := 0; j < cols; j++ {
				want[s*cols+j] += w * float64(dout[i*cols+j])
				scale[s*cols+j] += math.Abs(w * float64(dout[i*cols+j]))
			}
		}
	}
	return want, scale
}

var blockShapes = [][3]int{ // numDst, numSrc, cols
	{0, 0, 3}, {0, 5, 4}, {1, 1, 1}, {3, 7, 5}, {13, 29, 17}, {64, 200, 33}, {500, 1200, 64}, {2000, 2100, 3},
}

var aggs = []device.Agg{device.AggSum, device.AggMean, device.AggWeighted}

func TestSpMM(t *testing.T) {
	r := rng.New(4)
	for _, sh := range blockShapes {
		for _, weighted := range []bool{false, true} {
			blk := randBlock(r, sh[0], sh[1], weighted)
			if err := blk.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, agg := range aggs {
				name := fmt.Sprintf("%v/%dx%d/c=%d/weighted=%v", agg, sh[0], sh[1], sh[2], weighted)
				d := New(1, 0)
				x := randTensor(t, d, r, sh[1], sh[2])
				dout := randTensor(t, d, r, sh[0], sh[2])
				want, scale := refSpMM(blk, x.Data, sh[2], agg)
				wantT, scaleT := refSpMMT(blk, dout.Data, sh[2], agg)
				var first, firstT []float32
				for _, th := range testThreads {
					dd := New(th, 0)
					out := randTensor(t, dd, r, sh[0], sh[2]) // garbage must be overwritten
					dx := randTensor(t, dd, r, sh[1], sh[2])
					dd.SpMM(out, blk, x, agg)
					dd.SpMMT(dx, blk, dout, agg)
					checkClose(t, name+"/SpMM", out.Data, want, scale)
					checkClose(t, name+"/SpMMT", dx.Data, wantT, scaleT)
					if first == nil {
						first, firstT = out.Data, dx.Data
					} else if !sameBits(first, out.Data) || !sameBits(firstT, dx.Data) {
						t.Fatalf("%s: threads=%d differs from threads=1", name, th)
					}
				}
			}
		}
	}
}

// TestSpMMTAdjoint checks <SpMM(x), y> == <x, SpMMT(y)> for every Agg.
func TestSpMMTAdjoint(t *testing.T) {
	r := rng.New(5)
	d := New(2, 0)
	for _, weighted := range []bool{false, true} {
		blk := randBlock(r, 300, 700, weighted)
		for _, agg := range aggs {
			const cols = 19
			x := randTensor(t, d, r, blk.NumSrc, cols)
			y := randTensor(t, d, r, blk.NumDst, cols)
			ax := mustAlloc(t, d, blk.NumDst, cols)
			aty := mustAlloc(t, d, blk.NumSrc, cols)
			d.SpMM(ax, blk, x, agg)
			d.SpMMT(aty, blk, y, agg)
			var lhs, rhs, mag float64
			for i := range ax.Data {
				lhs += float64(ax.Data[i]) * float64(y.Data[i])
				mag += math.Abs(float64(ax.Data[i]) * float64(y.Data[i]))
			}
			for i := range aty.Data {
				rhs += float64(x.Data[i]) * float64(aty.Data[i])
			}
			if math.Abs(lhs-rhs) > 1e-5*mag {
				t.Fatalf("%v weighted=%v: <Ax,y> = %v, <x,Aᵀy> = %v", agg, weighted, lhs, rhs)
			}
		}
	}
}

func TestGatherScatter(t *testing.T) {
	r := rng.New(6)
	for _, sh := range [][3]int{{0, 4, 3}, {1, 1, 1}, {37, 11, 7}, {5000, 300, 41}, {3000, 20000, 64}} { // rows gathered, src rows, cols (the last takes the prefetching path)
		n, srcRows, cols := sh[0], sh[1], sh[2]
		d := New(1, 0)
		src := randTensor(t, d, r, srcRows, cols)
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(r.Intn(srcRows)) // duplicates likely
		}
		rows := randTensor(t, d, r, n, cols)
		base := randTensor(t, d, r, srcRows, cols)
		wantS := make([]float64, srcRows*cols)
		scaleS := make([]float64, srcRows*cols)
		for i, v := range base.Data {
			wantS[i], scaleS[i] = float64(v), math.Abs(float64(v))
		}
		for i, s := range idx {
			for j := 0; j < cols; j++ {
				wantS[int(s)*cols+j] += float64(rows.Data[i*cols+j])
				scaleS[int(s)*cols+j] += math.Abs(float64(rows.Data[i*cols+j]))
			}
		}
		var firstS []float32
		for _, th := range testThreads {
			dd := New(th, 0)
			g := randTensor(t, dd, r, n, cols)
			gh := randTensor(t, dd, r, n, cols)
			dd.Gather(g, src, idx)
			dd.GatherHost(gh, src.Data, idx)
			for i, s := range idx {
				for j := 0; j < cols; j++ {
					if g.Data[i*cols+j] != src.Data[int(s)*cols+j] || gh.Data[i*cols+j] != src.Data[int(s)*cols+j] {
						t.Fatalf("gather %v threads=%d: row %d wrong", sh, th, i)
					}
				}
			}
			acc := clone(t, dd, base)
			dd.ScatterAdd(acc, rows, idx)
			checkClose(t, fmt.Sprintf("ScatterAdd %v threads=%d", sh, th), acc.Data, wantS, scaleS)
			if firstS == nil {
				firstS = acc.Data
			} else if !sameBits(firstS, acc.Data) {
				t.Fatalf("ScatterAdd %v: threads=%d differs from threads=1", sh, th)
			}
		}
	}
}

// TestAxpyNext checks the vector routine (assembly where available) against
// float64 for every tail length, alpha = 1 being exactly an addition.
func TestAxpyNext(t *testing.T) {
	r := rng.New(9)
	for n := 0; n <= 41; n++ {
		x := make([]float32, n)
		y := make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for _, alpha := range []float32{1, -0.37} {
			got := append([]float32(nil), y...)
			next := new(float32)
			axpyNext(alpha, x, got, next)
			for i := range got {
				want := float64(y[i]) + float64(alpha)*float64(x[i])
				if alpha == 1 && got[i] != y[i]+x[i] {
					t.Fatalf("n=%d alpha=1: [%d] = %g, want exactly %g", n, i, got[i], y[i]+x[i])
				}
				if math.Abs(float64(got[i])-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("n=%d alpha=%g: [%d] = %g, want %g", n, alpha, i, got[i], want)
				}
			}
		}
	}
}

// TestSpMMLarge runs aggregation on an input large enough for the
// prefetching path, against the float64 reference.
func TestSpMMLarge(t *testing.T) {
	r := rng.New(10)
	const ns, nd, cols = 9000, 3000, 37 // 333k floats: above the prefetch threshold
	blk := randBlock(r, nd, ns, true)
	d := New(2, 0)
	x := randTensor(t, d, r, ns, cols)
	for _, agg := range aggs {
		out := mustAlloc(t, d, nd, cols)
		d.SpMM(out, blk, x, agg)
		want, scale := refSpMM(blk, x.Data, cols, agg)
		checkClose(t, fmt.Sprintf("%v", agg), out.Data, want, scale)
	}
}
