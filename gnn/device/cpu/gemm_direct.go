package cpu

// A product whose A is not transposed can skip packing A: the micro-kernel
// broadcasts A's values from its rows where they lie (kernelAVX2Direct,
// kernelAVX512Direct),
// and the mr rows it reads stay in L1 while it runs over every sliver of
// the packed B. At tall shapes with a narrow output (100k×256 times
// 256×64) packing A costs about as much as the product itself, and at the
// other tall shapes it still reads and writes A once more than needed.
// The direct path packs all of op(B) for the task's columns at once (its
// k rows must fit the workspace; where the tasks split only the rows,
// once for all of them) and keeps a block of gemmDirectMC rows of
// C in L2 over every pass along k, so a long k does not stream C from
// memory once per pass.

// gemmDirectMC is the number of rows of C the direct path keeps in the
// caches over the passes along k.
const gemmDirectMC = 96

// useDirect reports whether rows × nc columns of op run on the direct path.
func useDirect(op *gemmOp, kern microKernel, nc int) bool {
	return kern.direct != nil && !op.transA && op.alpha == 1 &&
		op.k*roundUp(nc, kern.nr) <= gemmKC*roundUp(gemmNC, kern.nr)
}

// packBAll packs op(B)[:, j0:j0+nc] for the direct path: for each pass
// along k, panels of nr columns as packB lays them out, the pass starting
// at row pc at pc*roundUp(nc, nr).
func packBAll(op *gemmOp, dst []float32, j0, nc, nr int) {
	ncp := roundUp(nc, nr)
	for pc := 0; pc < op.k; pc += gemmKC {
		packB(op, dst[pc*ncp:], pc, min(gemmKC, op.k-pc), j0, nc, nr)
	}
}

// packBShared packs all of op(B) as packBAll(op, dst, 0, n, nr) does,
// sharing its column panels between the threads: at a small product (a
// 1024-row mini-batch layer: 100×256 of B packed in about 11 µs, the
// product in about 350 µs on two threads) one thread packing while the
// others wait is a few percent of the time.
func (d *Device) packBShared(op *gemmOp, dst []float32, n, nr int) {
	panels := (n + nr - 1) / nr
	parts := min(panels, d.threads)
	if op.k*n < 1<<14 {
		parts = 1
	}
	ncp := roundUp(n, nr)
	d.parallelChunks(parts, func(t int) {
		j0, j1 := t*panels/parts*nr, min((t+1)*panels/parts*nr, n)
		for pc := 0; pc < op.k; pc += gemmKC {
			kc := min(gemmKC, op.k-pc)
			packB(op, dst[pc*ncp+j0*kc:], pc, kc, j0, j1-j0, nr)
		}
	})
}

// gemmBlockDirect computes rows [i0, i1) × columns [j0, j1) of
// C += op(A)·op(B) with A read in place (see useDirect) and op(B) packed
// by packBAll in bp.
func gemmBlockDirect(op *gemmOp, i0, i1, j0, j1 int, kern microKernel, ws *workspace, bpAll []float32) {
	mr, nr := kern.mr, kern.nr
	nc := j1 - j0
	ncp := roundUp(nc, nr)
	nq := ncp / nr
	for ic := i0; ic < i1; ic += gemmDirectMC {
		ie := min(ic+gemmDirectMC, i1)
		for pc := 0; pc < op.k; pc += gemmKC {
			kc := min(gemmKC, op.k-pc)
			set := op.overwrite && pc == 0
			bp := bpAll[pc*ncp : pc*ncp+ncp*kc]
			ir := ic
			for ; ir+mr <= ie; ir += mr {
				a := op.a[ir*op.lda+pc:]
				next := min(mr, i1-ir-mr) // rows of the next group
				var pf []float32          // the next group, for a kernel that prefetches it
				if next == mr && kern.directPrefetches {
					pf = op.a[(ir+mr)*op.lda+pc:]
					next = 0
				}
				for q := range nq {
					jr := q * nr
					// Share q of the next group's rows (prefetchA's, without
					// a call for the many empty shares of a wide B).
					for r := ir + mr + q*next/nq; r < ir+mr+(q+1)*next/nq; r++ {
						prefetchLinesL2(&op.a[r*op.lda+pc], kc)
					}
					bpan := bp[jr*kc : (jr+nr)*kc]
					off := ir*op.ldc + j0 + jr
					if q > 0 {
						pf = nil // the first sliver's call prefetched it
					}
					if jr+nr <= nc {
						kern.direct(kc, a, op.lda, bpan, op.c[off:], op.ldc, set, pf)
						continue
					}
					kern.direct(kc, a, op.lda, bpan, ws.tmp, nr, true, pf)
					storeTile(op.c[off:], op.ldc, ws.tmp, nr, mr, nc-jr, set)
				}
			}
			if ir < ie { // fewer than mr rows left: pack them
				packA(op, ws.ap, ir, ie-ir, pc, kc, mr)
				for jr := 0; jr < nc; jr += nr {
					kern.fn(kc, ws.ap[:mr*kc], bp[jr*kc:(jr+nr)*kc], ws.tmp, nr, true)
					storeTile(op.c[ir*op.ldc+j0+jr:], op.ldc, ws.tmp, nr, ie-ir, min(nr, nc-jr), set)
				}
			}
		}
	}
}

// storeTile stores (set) or adds rows×cols values of tmp, whose rows are
// ldt apart, into C, whose rows are ldc apart.
func storeTile(c []float32, ldc int, tmp []float32, ldt, rows, cols int, set bool) {
	for r := range rows {
		dst := c[r*ldc : r*ldc+cols]
		if set {
			copy(dst, tmp[r*ldt:r*ldt+cols])
		} else {
			addVec(tmp[r*ldt:r*ldt+cols], dst)
		}
	}
}
