package cpu

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// SpMM sets out (NumDst×C) row i to the aggregation of x (NumSrc×C) rows
// over block row i. AggWeighted on a block without Weights weighs every edge
// 1; AggMean of an empty row is zero. Rows are independent, so the kernel
// gathers in parallel without races and each row's sum runs in edge order.
func (d *Device) SpMM(out *tensor.Tensor, blk *graph.Block, x *tensor.Tensor, agg device.Agg) {
	if out.Rows != blk.NumDst || x.Rows != blk.NumSrc || out.Cols != x.Cols {
		panic(fmt.Sprintf("cpu: SpMM: out %s, x %s, block %d←%d", out.Shape(), x.Shape(), blk.NumDst, blk.NumSrc))
	}
	w := blk.Weights
	if agg != device.AggWeighted {
		w = nil
	}
	d.aggregate(out, blk.Indptr, blk.Indices, w, nil, x, agg == device.AggMean)
}

// SpMMT is SpMM's adjoint: dx (NumSrc×C) row j is the sum, over the edges
// i←j, of dout row i times the edge's weight in SpMM (1, Weights[e], or
// 1/deg(i) for AggMean where deg is the destination's in-degree). It gathers
// over blk.Transpose(), so it is race-free and each row's order is fixed.
func (d *Device) SpMMT(dx *tensor.Tensor, blk *graph.Block, dout *tensor.Tensor, agg device.Agg) {
	if dout.Rows != blk.NumDst || dx.Rows != blk.NumSrc || dout.Cols != dx.Cols {
		panic(fmt.Sprintf("cpu: SpMMT: dx %s, dout %s, block %d←%d", dx.Shape(), dout.Shape(), blk.NumDst, blk.NumSrc))
	}
	t := blk.Transpose()
	var w, dstScale []float32
	switch agg {
	case device.AggWeighted:
		w = t.Weights
		if (blk.Weights == nil) != (w == nil) {
			panic("cpu: SpMMT: block Weights changed after Transpose was cached")
		}
	case device.AggMean:
		dstScale = make([]float32, blk.NumDst)
		for i := range dstScale {
			if deg := blk.Indptr[i+1] - blk.Indptr[i]; deg > 0 {
				dstScale[i] = 1 / float32(deg)
			}
		}
	}
	d.aggregate(dx, t.Indptr, t.Indices, w, dstScale, dout, false)
}

// aggregate sets out row i to sum_e coef(e) * x[idx[e]] over e in
// [indptr[i], indptr[i+1]), where coef is w[e] (w != nil), perSrc[idx[e]]
// (perSrc != nil) or 1, and divides by the row's length when mean is set.
// aggregateAhead is how many edges ahead aggregate prefetches source rows.
const aggregateAhead = 8

func (d *Device) aggregate(out *tensor.Tensor, indptr []int64, idx []int32, w, perSrc []float32, x *tensor.Tensor, mean bool) {
	cols := x.Cols
	rows := out.Rows
	nnz := 1
	if rows > 0 {
		nnz = int(indptr[rows]) / rows
	}
	xd := x.Data[:x.Len()]
	od := out.Data[:out.Len()]
	// Source rows are scattered over x: while adding one, prefetch the row
	// aggregateAhead edges ahead (across row boundaries) so that several
	// misses are in flight at once, as in gather, when x is larger than the
	// caches.
	prefetch := hasPrefetch && cols > 0 && len(xd) >= 1<<18
	d.parallelFor(rows, grainRows((nnz+1)*cols), func(lo, hi int) {
		end := indptr[hi]
		if prefetch {
			for k := indptr[lo]; k < min(indptr[lo]+aggregateAhead, end); k++ {
				prefetchLines(&xd[int(idx[k])*cols], cols)
			}
		}
		for i := lo; i < hi; i++ {
			o := od[i*cols : (i+1)*cols]
			b, e := indptr[i], indptr[i+1]
			if b == e {
				clear(o)
				continue
			}
			for k := b; k < e; k++ {
				s := int(idx[k])
				src := xd[s*cols : (s+1)*cols]
				var c float32 = 1
				if w != nil {
					c = w[k]
				} else if perSrc != nil {
					c = perSrc[s]
				}
				next := &src[0]
				if j := k + aggregateAhead; prefetch && j < end {
					next = &xd[int(idx[j])*cols]
				}
				if k == b {
					if prefetch {
						prefetchLines(next, cols)
					}
					if c == 1 {
						copy(o, src)
					} else {
						scaleVecTo(c, src, o)
					}
					continue
				}
				axpyNext(c, src, o, next)
			}
			if mean {
				scaleVec(1/float32(e-b), o)
			}
		}
	})
}

// GatherHost sets dst row i to row idx[i] of the host matrix src, whose
// rows are dst.Cols long.
func (d *Device) GatherHost(dst *tensor.Tensor, src []float32, idx []int32) {
	if len(idx) != dst.Rows {
		panic(fmt.Sprintf("cpu: GatherHost: %d indices for %s", len(idx), dst.Shape()))
	}
	d.gather(dst.Data[:dst.Len()], src, dst.Cols, idx)
}

// Gather sets dst row i to src row idx[i].
func (d *Device) Gather(dst, src *tensor.Tensor, idx []int32) {
	if len(idx) != dst.Rows || dst.Cols != src.Cols {
		panic(fmt.Sprintf("cpu: Gather: %d indices, dst %s, src %s", len(idx), dst.Shape(), src.Shape()))
	}
	d.gather(dst.Data[:dst.Len()], src.Data[:src.Len()], dst.Cols, idx)
}

// ScatterAdd adds src row i into dst row idx[i]. Indices may repeat: each
// worker owns a range of dst rows and scans all of idx for its own rows, so
// there are no races and every dst row receives its additions in index
// order, whatever the thread count.
func (d *Device) ScatterAdd(dst, src *tensor.Tensor, idx []int32) {
	if len(idx) != src.Rows || dst.Cols != src.Cols {
		panic(fmt.Sprintf("cpu: ScatterAdd: %d indices, dst %s, src %s", len(idx), dst.Shape(), src.Shape()))
	}
	cols := dst.Cols
	dd := dst.Data[:dst.Len()]
	sd := src.Data[:src.Len()]
	for _, r := range idx {
		if r < 0 || int(r) >= dst.Rows {
			panic(fmt.Sprintf("cpu: ScatterAdd: index %d out of range for %s", r, dst.Shape()))
		}
	}
	if len(idx)*cols < minWork || d.threads == 1 {
		for i, r := range idx {
			addVec(sd[i*cols:(i+1)*cols], dd[int(r)*cols:(int(r)+1)*cols])
		}
		return
	}
	// Split dst rows into 4 ranges per thread; every range scans idx once.
	parts := 4 * d.threads
	span := (dst.Rows + parts - 1) / parts
	d.parallelChunks(parts, func(c int) {
		lo, hi := int32(c*span), int32(min((c+1)*span, dst.Rows))
		for i, r := range idx {
			if r >= lo && r < hi {
				addVec(sd[i*cols:(i+1)*cols], dd[int(r)*cols:(int(r)+1)*cols])
			}
		}
	})
}
