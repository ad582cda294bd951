//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// devBlock is the device copy of a graph block's CSR.
type devBlock struct {
	key     blockKey
	indptr  *block // int64 × (rows+1)
	indices *block // int32 × edges, nil without edges
	weights *block // float32 × edges, nil without weights or edges
	bytes   int64
}

// blockKey identifies the host arrays a device copy was made from, so that
// a block whose arrays were replaced is uploaded again.
type blockKey struct {
	rows, cols      int
	edges           int
	indptr, indices uintptr
	weights         uintptr
	hasW            bool
}

func keyOf(b *graph.Block) blockKey {
	k := blockKey{rows: b.NumDst, cols: b.NumSrc, edges: len(b.Indices), hasW: b.Weights != nil}
	if len(b.Indptr) > 0 {
		k.indptr = uintptr(unsafe.Pointer(&b.Indptr[0]))
	}
	if len(b.Indices) > 0 {
		k.indices = uintptr(unsafe.Pointer(&b.Indices[0]))
	}
	if len(b.Weights) > 0 {
		k.weights = uintptr(unsafe.Pointer(&b.Weights[0]))
	}
	return k
}

// blockOnDevice returns the device copy of b, uploading it (on the compute
// stream) unless a copy made from the same arrays is cached. A block must
// not be changed in place after its first use on the device. The caller
// holds d.blkMu until it has queued the kernels that read the copy, then
// calls freeEvicted: copies the cache evicted meanwhile are freed only
// then, so that no other goroutine reuses their memory before those
// kernels are queued.
func (d *Device) blockOnDevice(b *graph.Block) *devBlock {
	if len(b.Indptr) != b.NumDst+1 || int64(len(b.Indices)) != b.Indptr[b.NumDst] {
		panic(fmt.Sprintf("cuda: block %d←%d: %d indptr entries, %d indices", b.NumDst, b.NumSrc, len(b.Indptr), len(b.Indices)))
	}
	k := keyOf(b)
	if db, ok := d.blocks.get(b); ok && db.key == k {
		return db
	}
	db := &devBlock{key: k, indptr: d.upload(int64Bytes(b.Indptr), d.compute)}
	db.bytes = db.indptr.size
	if len(b.Indices) > 0 {
		db.indices = d.upload(int32Bytes(b.Indices), d.compute)
		db.bytes += db.indices.size
		if b.Weights != nil {
			db.weights = d.upload(floatBytes(b.Weights), d.compute)
			db.bytes += db.weights.size
		}
	}
	d.blocks.add(b, db, db.bytes)
	return db
}

// freeEvicted returns the memory of evicted block copies (d.blkMu held;
// the work using them was queued on the compute stream before).
func (d *Device) freeEvicted() {
	for _, db := range d.evicted {
		for _, b := range []*block{db.indptr, db.indices, db.weights} {
			if b != nil {
				d.freeScratch(b)
			}
		}
	}
	clear(d.evicted)
	d.evicted = d.evicted[:0]
}

func ptrOf(b *block) uintptr {
	if b == nil {
		return 0
	}
	return b.ptr
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C (see device.Device). C must
// not share storage with A or B.
func (d *Device) Gemm(transA, transB bool, alpha float32, a, b *tensor.Tensor, beta float32, c *tensor.Tensor) {
	m, n, k := device.GemmDims(device.KindCUDA, transA, transB, a, b, c)
	if m == 0 || n == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(a, b, c)
	if k == 0 || alpha == 0 {
		if beta != 1 {
			var g kargs
			g.i64(int64(m) * int64(n)).f32(beta).ptr(d.ptr(c))
			d.launch("gemm_beta", elemGrid(int64(m)*int64(n), d.maxBlocks), 1, 1, d.compute, &g)
		}
		return
	}
	pa, pb, pc := d.ptr(a), d.ptr(b), d.ptr(c)
	if d.blas != nil {
		if !d.faulted() {
			d.must("cuBLAS gemm", d.blas.Gemm(transA, transB, m, n, k, alpha, pa, a.Cols, pb, b.Cols, beta, pc, c.Cols))
		}
		return
	}
	name := "gemm_" + map[bool]string{false: "n", true: "t"}[transA] + map[bool]string{false: "n", true: "t"}[transB]
	for m0 := 0; m0 < m; m0 += gemmStripRows {
		ms := min(gemmStripRows, m-m0)
		// Row m0 of op(A): row m0 of A, or column m0 of A when transposed.
		aOff := uintptr(m0) * uintptr(a.Cols) * 4
		if transA {
			aOff = uintptr(m0) * 4
		}
		d.gemmStrip(name, ms, n, k, alpha, pa+aOff, a.Cols, pb, b.Cols, beta, pc+uintptr(m0)*uintptr(n)*4, n)
	}
}

// gemmStrip launches one product of at most gemmStripRows rows.
func (d *Device) gemmStrip(name string, m, n, k int, alpha float32, pa uintptr, lda int, pb uintptr, ldb int, beta float32, pc uintptr, ldc int) {
	p := planGemm(m, n, k)
	var a kargs
	a.i32(m).i32(n).i32(k).f32(alpha).ptr(pa).i32(lda).ptr(pb).i32(ldb).f32(beta).ptr(pc).i32(ldc)
	if p.splits <= 1 {
		a.ptr(0).i32(0)
		d.launch(name, p.gridX, p.gridY, 1, d.compute, &a)
		return
	}
	ws := d.scratch(p.workspace(m, n) * 4)
	a.ptr(ws.ptr).i32(p.kchunk)
	d.launch(name, p.gridX, p.gridY, p.splits, d.compute, &a)
	var r kargs
	r.i32(m).i32(n).i32(p.splits).ptr(ws.ptr).f32(beta).ptr(pc).i32(ldc)
	d.launch("gemm_reduce", elemGrid(int64(m)*int64(n), d.maxBlocks), 1, 1, d.compute, &r)
	d.freeScratch(ws)
}

// SpMM sets out row i to the aggregation of x's rows over block row i
// (see device.Device).
func (d *Device) SpMM(out *tensor.Tensor, blk *graph.Block, x *tensor.Tensor, agg device.Agg) {
	if out.Rows != blk.NumDst || x.Rows != blk.NumSrc || out.Cols != x.Cols {
		panic(fmt.Sprintf("cuda: SpMM: out %s, x %s, block %d←%d", out.Shape(), x.Shape(), blk.NumDst, blk.NumSrc))
	}
	if out.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(out, x)
	d.blkMu.Lock()
	defer d.blkMu.Unlock()
	db := d.blockOnDevice(blk)
	var w uintptr
	if agg == device.AggWeighted {
		w = ptrOf(db.weights)
	}
	d.spmm(out, db, w, 0, x, agg == device.AggMean)
	d.freeEvicted()
}

func (d *Device) spmm(out *tensor.Tensor, db *devBlock, w, scale uintptr, x *tensor.Tensor, mean bool) {
	var a kargs
	a.ptr(d.ptr(out)).ptr(db.indptr.ptr).ptr(ptrOf(db.indices)).ptr(w).ptr(scale).ptr(d.ptr(x)).i32(out.Rows).i32(out.Cols)
	if mean {
		a.i32(1)
	} else {
		a.i32(0)
	}
	d.launch("spmm", warpGrid(int64(out.Rows), d.maxBlocks), 1, 1, d.compute, &a)
}

// SpMMT is SpMM's adjoint (see device.Device): it aggregates over the
// block's transpose, computed on the host once per block as on the CPU.
func (d *Device) SpMMT(dx *tensor.Tensor, blk *graph.Block, dout *tensor.Tensor, agg device.Agg) {
	if dout.Rows != blk.NumDst || dx.Rows != blk.NumSrc || dout.Cols != dx.Cols {
		panic(fmt.Sprintf("cuda: SpMMT: dx %s, dout %s, block %d←%d", dx.Shape(), dout.Shape(), blk.NumDst, blk.NumSrc))
	}
	if dx.Len() == 0 {
		return
	}
	t := blk.Transpose()
	if agg == device.AggWeighted && (blk.Weights == nil) != (t.Weights == nil) {
		panic("cuda: SpMMT: block Weights changed after Transpose was cached")
	}
	d.enter()
	defer d.leave()
	d.use(dx, dout)
	d.blkMu.Lock()
	defer d.blkMu.Unlock()
	tb := d.blockOnDevice(t)
	var w, scale uintptr
	switch agg {
	case device.AggWeighted:
		w = ptrOf(tb.weights)
	case device.AggMean:
		scale = d.blockOnDevice(blk).indptr.ptr
	}
	d.spmm(dx, tb, w, scale, dout, false)
	d.freeEvicted()
}

// checkRows panics unless every index is a row of a rows-row matrix.
func checkRows(op string, idx []int32, rows int) {
	for _, r := range idx {
		if r < 0 || int(r) >= rows {
			panic(fmt.Sprintf("cuda: %s: index %d out of range for %d rows", op, r, rows))
		}
	}
}

// Gather sets dst row i to src row idx[i].
func (d *Device) Gather(dst, src *tensor.Tensor, idx []int32) {
	if len(idx) != dst.Rows || dst.Cols != src.Cols {
		panic(fmt.Sprintf("cuda: Gather: %d indices, dst %s, src %s", len(idx), dst.Shape(), src.Shape()))
	}
	checkRows("Gather", idx, src.Rows)
	if dst.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(dst, src)
	ib := d.upload(int32Bytes(idx), d.compute)
	var a kargs
	a.ptr(d.ptr(dst)).ptr(d.ptr(src)).ptr(ib.ptr).i32(len(idx)).i32(dst.Cols)
	d.launch("gather", elemGrid(int64(dst.Len()), d.maxBlocks), 1, 1, d.compute, &a)
	d.freeScratch(ib)
}

// ScatterAdd adds src row i into dst row idx[i]; repeated indices add in
// index order (grouped on the host, no atomics).
func (d *Device) ScatterAdd(dst, src *tensor.Tensor, idx []int32) {
	if len(idx) != src.Rows || dst.Cols != src.Cols {
		panic(fmt.Sprintf("cuda: ScatterAdd: %d indices, dst %s, src %s", len(idx), dst.Shape(), src.Shape()))
	}
	checkRows("ScatterAdd", idx, dst.Rows)
	if len(idx) == 0 || dst.Cols == 0 {
		return
	}
	p := planScatter(idx)
	packed := make([]int32, 0, len(p.target)+len(p.segptr)+len(p.perm))
	packed = append(append(append(packed, p.target...), p.segptr...), p.perm...)
	d.enter()
	defer d.leave()
	d.use(dst, src)
	ib := d.upload(int32Bytes(packed), d.compute)
	nseg := len(p.target)
	var a kargs
	a.ptr(d.ptr(dst)).ptr(d.ptr(src)).ptr(ib.ptr).ptr(ib.ptr + uintptr(nseg)*4).ptr(ib.ptr + uintptr(2*nseg+1)*4).i32(nseg).i32(dst.Cols)
	d.launch("scatter_add_seg", warpGrid(int64(nseg), d.maxBlocks), 1, 1, d.compute, &a)
	d.freeScratch(ib)
}

// elementwise launches a grid-stride kernel over n elements.
func (d *Device) elementwise(name string, n int64, a *kargs) {
	d.launch(name, elemGrid(n, d.maxBlocks), 1, 1, d.compute, a)
}

// AddBias adds the 1×C row b to every row of x, in place.
func (d *Device) AddBias(x, b *tensor.Tensor) {
	if b.Rows != 1 || b.Cols != x.Cols {
		panic(fmt.Sprintf("cuda: AddBias: x %s, bias %s", x.Shape(), b.Shape()))
	}
	if x.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(x, b)
	var a kargs
	a.ptr(d.ptr(x)).ptr(d.ptr(b)).i64(int64(x.Len())).i32(x.Cols)
	d.elementwise("add_bias", int64(x.Len()), &a)
}

// SumRows sets db (1×C) to the column sums of dy: double sums over fixed
// chunks of 256 rows added in chunk order, bit-identical to the CPU
// backend.
func (d *Device) SumRows(db, dy *tensor.Tensor) {
	if db.Rows != 1 || db.Cols != dy.Cols {
		panic(fmt.Sprintf("cuda: SumRows: db %s, dy %s", db.Shape(), dy.Shape()))
	}
	if db.Cols == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(db, dy)
	chunks := int(ceilDiv(int64(dy.Rows), sumChunkRows))
	if chunks == 0 {
		d.must("memset", cudrv.MemsetD32Async(cudrv.DevicePtr(d.ptr(db)), 0, int64(db.Cols), d.compute))
		return
	}
	part := d.scratch(int64(chunks) * int64(dy.Cols) * 8)
	gx, gy := sumRowsGrid(dy.Rows, dy.Cols)
	var a kargs
	a.ptr(part.ptr).ptr(d.ptr(dy)).i32(dy.Rows).i32(dy.Cols)
	d.launch("sum_rows_partial", gx, gy, 1, d.compute, &a)
	var f kargs
	f.ptr(d.ptr(db)).ptr(part.ptr).i32(chunks).i32(dy.Cols)
	d.launch("sum_rows_final", gridBlocks(int64(dy.Cols), blockThreads, d.maxBlocks), 1, 1, d.compute, &f)
	d.freeScratch(part)
}

// Relu sets y = max(x, 0) by sign bit, as the CPU backend; y may be x.
func (d *Device) Relu(y, x *tensor.Tensor) {
	mustSame("Relu", y, x)
	d.unary("relu", y, x)
}

func (d *Device) unary(name string, y, x *tensor.Tensor) {
	if y.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(y, x)
	var a kargs
	a.ptr(d.ptr(y)).ptr(d.ptr(x)).i64(int64(y.Len()))
	d.elementwise(name, int64(y.Len()), &a)
}

// ReluBackward sets dx = dy where y > 0, else 0; dx may be dy.
func (d *Device) ReluBackward(dx, dy, y *tensor.Tensor) {
	mustSame("ReluBackward", dx, dy)
	mustSame("ReluBackward", dy, y)
	d.binary("relu_backward", dx, dy, y)
}

func (d *Device) binary(name string, dst, a, b *tensor.Tensor) {
	if dst.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(dst, a, b)
	var k kargs
	k.ptr(d.ptr(dst)).ptr(d.ptr(a)).ptr(d.ptr(b)).i64(int64(dst.Len()))
	d.elementwise(name, int64(dst.Len()), &k)
}

// DropoutMask fills mask with 0 (probability p) or 1/(1-p), identical to
// the CPU backend's mask for the same seed and shape.
func (d *Device) DropoutMask(mask *tensor.Tensor, p float32, seed uint64) {
	if mask.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(mask)
	if p <= 0 || p >= 1 {
		var v float32
		if p <= 0 {
			v = 1
		}
		d.must("memset", cudrv.MemsetD32Async(cudrv.DevicePtr(d.ptr(mask)), math.Float32bits(v), int64(mask.Len()), d.compute))
		return
	}
	keep := 1 / (1 - p)
	n := int64(mask.Len())
	var a kargs
	a.ptr(d.ptr(mask)).i64(n).u64(seed).u32(dropoutThresh(p)).f32(keep)
	d.launch("dropout_mask", dropoutGrid(n, d.maxBlocks), 1, 1, d.compute, &a)
}

// Mul sets dst = a ⊙ b elementwise; dst may alias a or b.
func (d *Device) Mul(dst, a, b *tensor.Tensor) {
	mustSame("Mul", dst, a)
	mustSame("Mul", a, b)
	d.binary("mul", dst, a, b)
}

// Add sets dst = a + b elementwise; dst may alias a or b.
func (d *Device) Add(dst, a, b *tensor.Tensor) {
	mustSame("Add", dst, a)
	mustSame("Add", a, b)
	d.binary("add", dst, a, b)
}

// Axpy sets y += alpha*x.
func (d *Device) Axpy(alpha float32, x, y *tensor.Tensor) {
	mustSame("Axpy", x, y)
	if x.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(x, y)
	var a kargs
	a.f32(alpha).ptr(d.ptr(x)).ptr(d.ptr(y)).i64(int64(x.Len()))
	d.elementwise("axpy", int64(x.Len()), &a)
}

// Scale sets x *= alpha.
func (d *Device) Scale(alpha float32, x *tensor.Tensor) {
	if x.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(x)
	var a kargs
	a.f32(alpha).ptr(d.ptr(x)).i64(int64(x.Len()))
	d.elementwise("scale", int64(x.Len()), &a)
}

// SoftmaxCrossEntropy computes the mean negative log-likelihood over the
// labelled rows (label -1 ignored), writes its gradient into grad (may be
// nil) and returns the loss and the number of rows whose argmax is the
// label (see the CPU backend). It waits for the result.
func (d *Device) SoftmaxCrossEntropy(logits *tensor.Tensor, labels []int32, grad *tensor.Tensor) (loss float64, correct int) {
	rows, cols := logits.Rows, logits.Cols
	counted := device.CountLabels(string(device.KindCUDA), labels, rows, cols)
	if grad != nil {
		mustSame("SoftmaxCrossEntropy", grad, logits)
	}
	if rows == 0 {
		return 0, 0
	}
	var inv float64
	if counted > 0 {
		inv = 1 / float64(counted)
	}
	d.enter()
	defer d.leave()
	d.use(logits, grad)
	lb := d.upload(int32Bytes(labels), d.compute)
	out := d.scratch(int64(rows) * 12) // rows doubles, then rows ints
	var gp uintptr
	if grad != nil {
		gp = d.ptr(grad)
	}
	var a kargs
	a.ptr(d.ptr(logits)).ptr(lb.ptr).ptr(gp).ptr(out.ptr).ptr(out.ptr + uintptr(rows)*8).i32(rows).i32(cols).f64(inv)
	d.launch("softmax_ce", warpGrid(int64(rows), d.maxBlocks), 1, 1, d.compute, &a)
	host := make([]byte, rows*12)
	d.stageOut(out.ptr, int64(len(host)), d.compute, func(b *hostBuf, off, l int64) {
		copy(host[off:off+l], b.bytes(int(l)))
	})
	d.freeScratch(lb)
	d.freeScratch(out)
	rowLoss := unsafe.Slice((*float64)(unsafe.Pointer(&host[0])), rows)
	rowOK := unsafe.Slice((*int32)(unsafe.Pointer(&host[rows*8])), rows)
	// Sum in fixed chunks of rows, then the chunks in order, as the CPU.
	for c := 0; c*sumChunkRows < rows; c++ {
		var ls float64
		var ok int
		for i := c * sumChunkRows; i < min((c+1)*sumChunkRows, rows); i++ {
			ls += rowLoss[i]
			ok += int(rowOK[i])
		}
		loss += ls
		correct += ok
	}
	return loss * inv, correct
}

// Argmax writes each row's index of its first largest value into dst. It
// waits for the result.
func (d *Device) Argmax(dst []int32, x *tensor.Tensor) {
	if len(dst) != x.Rows {
		panic(fmt.Sprintf("cuda: Argmax: %d outputs for %s", len(dst), x.Shape()))
	}
	if x.Rows == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(x)
	out := d.scratch(int64(x.Rows) * 4)
	var a kargs
	a.ptr(out.ptr).ptr(d.ptr(x)).i32(x.Rows).i32(x.Cols)
	d.launch("argmax", warpGrid(int64(x.Rows), d.maxBlocks), 1, 1, d.compute, &a)
	b := int32Bytes(dst)
	d.stageOut(out.ptr, int64(len(b)), d.compute, func(h *hostBuf, off, l int64) {
		copy(b[off:off+l], h.bytes(int(l)))
	})
	d.freeScratch(out)
}

// Adam applies one step of torch.optim.Adam with L2 weight decay (step
// counts from 1), as the CPU backend.
func (d *Device) Adam(param, grad, m, v *tensor.Tensor, step int, lr, beta1, beta2, eps, weightDecay float32) {
	device.CheckAdam(device.KindCUDA, param, grad, m, v, step)
	if param.Len() == 0 {
		return
	}
	bc1 := 1 - math.Pow(float64(beta1), float64(step))
	bc2 := 1 - math.Pow(float64(beta2), float64(step))
	stepSize := float32(float64(lr) / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	d.enter()
	defer d.leave()
	d.use(param, grad, m, v)
	var a kargs
	a.ptr(d.ptr(param)).ptr(d.ptr(grad)).ptr(d.ptr(m)).ptr(d.ptr(v)).i64(int64(param.Len())).
		f32(beta1).f32(beta2).f32(eps).f32(weightDecay).f32(stepSize).f32(invSqrtBC2)
	d.elementwise("adam", int64(param.Len()), &a)
}
