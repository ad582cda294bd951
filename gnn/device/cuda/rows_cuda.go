//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Row gathers into given rows of a batch's input: the feature cache's hits
// come from its resident rows in device memory (GatherRows), its misses
// from the host matrix (GatherHostRows).

// checkRowPairs panics unless pos and idx pair up, every position is a row
// of dst and every index a row of a source of rows rows.
func checkRowPairs(op string, dst *tensor.Tensor, pos, idx []int32, rows int) {
	if len(pos) != len(idx) {
		panic(fmt.Sprintf("cuda: %s: %d positions for %d rows", op, len(pos), len(idx)))
	}
	checkRows(op, pos, dst.Rows)
	checkRows(op, idx, rows)
}

// packRows returns pos followed by idx, for one index upload.
func packRows(pos, idx []int32) []int32 {
	return append(append(make([]int32, 0, len(pos)+len(idx)), pos...), idx...)
}

// GatherRows sets dst row pos[i] to src row idx[i] (positions distinct),
// with a kernel on the compute stream.
func (d *Device) GatherRows(dst *tensor.Tensor, pos []int32, src *tensor.Tensor, idx []int32) {
	if dst.Cols != src.Cols {
		panic(fmt.Sprintf("cuda: GatherRows: dst %s, src %s", dst.Shape(), src.Shape()))
	}
	checkRowPairs("GatherRows", dst, pos, idx, src.Rows)
	if len(idx) == 0 || dst.Cols == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(dst, src)
	n := len(idx)
	ib := d.upload(int32Bytes(packRows(pos, idx)), d.compute)
	a := gatherRowsAtArgs(d.ptr(dst), ib.ptr, d.ptr(src), ib.ptr+uintptr(n)*4, n, dst.Cols)
	d.launch("gather_rows_at", elemGrid(int64(n)*int64(dst.Cols), d.maxBlocks), 1, 1, d.compute, a)
	d.freeScratch(ib)
}

// GatherHostRows sets dst row pos[i] to row idx[i] of the host matrix src
// (rows dst.Cols long; positions distinct). From pinned memory of
// AllocPinned a kernel on the history stream reads the rows over the bus
// (UVA); from ordinary memory the host gathers them into pinned staging
// buffers whose copies run on the copy stream (with AsyncTransfer; on the
// compute stream, waited for, without), into scratch that a scatter_rows
// kernel on the same stream moves to their positions.
func (d *Device) GatherHostRows(dst *tensor.Tensor, pos []int32, src []float32, idx []int32) {
	cols := dst.Cols
	rows := 0
	if cols > 0 {
		rows = len(src) / cols
	}
	checkRowPairs("GatherHostRows", dst, pos, idx, rows)
	if len(idx) == 0 || cols == 0 {
		return
	}
	d.enter()
	defer d.leave()
	if pr, ok := d.pinnedAt(unsafe.Pointer(&src[0]), int64(len(src))*4); ok {
		d.pullPinnedAt(dst, pr, src, pos, idx)
		return
	}
	n := len(idx)
	rowsBytes := int64(n) * int64(cols) * 4
	// The scratch is taken before the stream is ordered after compute
	// (transferStream), as sideUpload explains.
	blk := d.scratch(rowsBytes + int64(n)*4)
	s := d.transferStream(dst)
	posAt := blk.ptr + uintptr(rowsBytes)
	if e := d.copyIn(posAt, int32Bytes(pos), s); e != nil {
		d.putEvent(e)
	}
	if e := d.stageRows(blk.ptr, src, cols, idx, s); e != nil {
		d.putEvent(e)
	}
	a := scatterRowsArgs(d.ptr(dst), blk.ptr, posAt, n, cols)
	d.launch("scatter_rows", elemGrid(rowsBytes/4, d.maxBlocks), 1, 1, s, a)
	e := d.record(s, false)
	d.freeScratch(blk, d.record(s, false))
	d.finishTransfer(dst, s, e)
}

// pullPinnedAt is pullPinned into rows pos of dst: a kernel on the history
// stream reads rows idx of pinned host memory over the bus.
func (d *Device) pullPinnedAt(dst *tensor.Tensor, pr pinnedRange, src []float32, pos, idx []int32) {
	n := len(idx)
	ib := d.sideUpload(d.history, int32Bytes(packRows(pos, idx)), dst, true)
	srcDev := pr.devptr + (uintptr(unsafe.Pointer(&src[0])) - pr.start)
	a := gatherRowsAtArgs(d.ptr(dst), ib.ptr, srcDev, ib.ptr+uintptr(n)*4, n, dst.Cols)
	d.launch("gather_rows_at", elemGrid(int64(n)*int64(dst.Cols), d.maxBlocks), 1, 1, d.history, a)
	e := d.record(d.history, false)
	d.freeScratch(ib, d.record(d.history, false))
	d.setReady(dst, e)
}
