//go:build cuda

package cuda

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Host-to-device copies go through pinned staging buffers in pieces of at
// most maxStage bytes: the host fills a piece (a memcpy, or a row gather)
// and queues its copy, and the next piece is filled while that copy runs.

// stageIn copies n bytes to device address dst on stream s: fill(b, off,
// len) writes bytes [off, off+len) of the source into staging buffer b.
// It returns the event recorded after the last piece's copy.
func (d *Device) stageIn(dst uintptr, n int64, s cudrv.Stream, fill func(b *hostBuf, off, len int64)) *evt {
	var last *evt
	d.stage.expect(n)
	for off := int64(0); off < n; off += maxStage {
		l := min(maxStage, n-off)
		b, err := d.stage.get(l)
		if !d.must("staging", err) {
			return last
		}
		fill(b, off, l)
		d.must("host-to-device copy", cudrv.MemcpyHtoDAsync(cudrv.DevicePtr(dst+uintptr(off)), b.ptr, l, s))
		e := d.record(s, false)
		if last != nil {
			d.putEvent(last)
		}
		last = d.record(s, false)
		d.stage.put(b, e)
	}
	return last
}

// stageOut copies n bytes from device address src on stream s to the host:
// drain(b, off, len) reads bytes [off, off+len) from staging buffer b once
// they have arrived.
func (d *Device) stageOut(src uintptr, n int64, s cudrv.Stream, drain func(b *hostBuf, off, len int64)) {
	for off := int64(0); off < n; off += maxStage {
		l := min(maxStage, n-off)
		b, err := d.stage.get(l)
		if !d.must("staging", err) {
			return
		}
		d.must("device-to-host copy", cudrv.MemcpyDtoHAsync(b.ptr, cudrv.DevicePtr(src+uintptr(off)), l, s))
		e := d.record(s, false)
		d.must("waiting for a device-to-host copy", e.e.Synchronize())
		d.putEvent(e)
		drain(b, off, l)
		d.stage.put(b, nil)
	}
}

// floatBytes views a float32 slice as bytes.
func floatBytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*4)
}

// int32Bytes views an int32 slice as bytes.
func int32Bytes(x []int32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*4)
}

// int64Bytes views an int64 slice as bytes.
func int64Bytes(x []int64) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*8)
}

// copyIn is stageIn from a contiguous host byte slice.
func (d *Device) copyIn(dst uintptr, src []byte, s cudrv.Stream) *evt {
	return d.stageIn(dst, int64(len(src)), s, func(b *hostBuf, off, l int64) {
		copy(b.bytes(int(l)), src[off:off+l])
	})
}

// upload copies host bytes into new scratch memory on stream s (ordered
// before the work queued after it on s).
func (d *Device) upload(src []byte, s cudrv.Stream) *block {
	blk := d.scratch(int64(len(src)))
	if len(src) > 0 {
		d.putEvent(d.copyIn(blk.ptr, src, s))
	}
	return blk
}

// sideUpload copies host bytes into new scratch memory on side stream s,
// ordered after the compute stream's work so far and after the
// side-stream work on t that the coming access (a write of t, or a read)
// conflicts with. The scratch is taken before s is ordered after compute:
// memory freed by compute-stream work carries no fence (compute's own
// order protects it there), so it is safe on another stream only once that
// stream waits for compute after the memory was taken. Taken the other
// way round, a block freed by a kernel queued in between could be
// overwritten by the upload while the kernel still reads it.
func (d *Device) sideUpload(s cudrv.Stream, src []byte, t *tensor.Tensor, write bool) *block {
	blk := d.scratch(int64(len(src)))
	d.useOn(s, t, write)
	if len(src) > 0 {
		d.putEvent(d.copyIn(blk.ptr, src, s))
	}
	return blk
}

// transferStream returns the stream of a host-to-device transfer into t,
// having ordered it after the compute stream's earlier work on t.
func (d *Device) transferStream(t *tensor.Tensor) cudrv.Stream {
	if !d.async {
		d.use(t)
		return d.compute
	}
	d.useOn(d.copyS, t, true)
	return d.copyS
}

// finishTransfer completes a transfer into t on stream s ending with event
// e: asynchronous transfers hand e to compute; synchronous ones wait.
func (d *Device) finishTransfer(t *tensor.Tensor, s cudrv.Stream, e *evt) {
	if e == nil {
		return
	}
	if d.async {
		d.setReady(t, e)
		return
	}
	d.must("waiting for a host-to-device copy", e.e.Synchronize())
	d.putEvent(e)
}

// CopyFromHost copies src (len == dst.Len()) into dst. From pinned memory
// of AllocPinned the copy is queued on the history stream (see
// device.PinnedHost); from ordinary memory it is staged, and with
// AsyncTransfer the call returns before the copy has run.
func (d *Device) CopyFromHost(dst *tensor.Tensor, src []float32) {
	if len(src) != dst.Len() {
		panic(fmt.Sprintf("cuda: CopyFromHost of %d values into %s", len(src), dst.Shape()))
	}
	if len(src) == 0 {
		return
	}
	d.enter()
	defer d.leave()
	n := int64(len(src)) * 4
	if _, ok := d.pinnedAt(unsafe.Pointer(&src[0]), n); ok {
		d.useOn(d.history, dst, true)
		d.must("host-to-device copy", cudrv.MemcpyHtoDAsync(cudrv.DevicePtr(d.ptr(dst)), unsafe.Pointer(&src[0]), n, d.history))
		d.setReady(dst, d.record(d.history, false))
		return
	}
	s := d.transferStream(dst)
	d.finishTransfer(dst, s, d.copyIn(d.ptr(dst), floatBytes(src), s))
}

// GatherHost sets dst row i to row idx[i] of the host matrix src. From
// pinned memory of AllocPinned a kernel on the history stream reads the
// rows over the bus (see device.PinnedHost); from ordinary memory the host
// gathers the rows into staging buffers, and with AsyncTransfer the call
// returns before the copy has run.
func (d *Device) GatherHost(dst *tensor.Tensor, src []float32, idx []int32) {
	d.gatherHost(dst, src, idx, nil)
}

// GatherHostTimed is GatherHost that also reports, through fn, when its
// copy ran on the device (see device.Async).
func (d *Device) GatherHostTimed(dst *tensor.Tensor, src []float32, idx []int32, fn func(start, dur int64)) {
	d.gatherHost(dst, src, idx, fn)
}

func (d *Device) gatherHost(dst *tensor.Tensor, src []float32, idx []int32, fn func(start, dur int64)) {
	cols := dst.Cols
	if len(idx) != dst.Rows {
		panic(fmt.Sprintf("cuda: GatherHost: %d indices for %s", len(idx), dst.Shape()))
	}
	for _, s := range idx {
		if s < 0 || (int(s)+1)*cols > len(src) {
			panic(fmt.Sprintf("cuda: GatherHost: row %d out of range (%d rows of %d)", s, len(src)/max(cols, 1), cols))
		}
	}
	if dst.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	if pr, ok := d.pinnedAt(unsafe.Pointer(&src[0]), int64(len(src))*4); ok {
		d.pullPinned(dst, pr, src, idx, fn)
		return
	}
	s := d.transferStream(dst)
	var begin device.Mark
	if fn != nil {
		begin = d.markOn(s)
	}
	d.endTransfer(dst, s, d.stageRows(d.ptr(dst), src, cols, idx, s), begin, fn)
}

// stageRows copies rows idx of the host matrix src (rows of cols) to
// device address dst, one after the other, on stream s, through pinned
// staging buffers filled by the host. It returns the event recorded after
// the last copy.
func (d *Device) stageRows(dst uintptr, src []float32, cols int, idx []int32, s cudrv.Stream) *evt {
	rowBytes := int64(cols) * 4
	if rowBytes > maxStage {
		// Rows longer than a staging buffer: one staged copy per row.
		var e *evt
		for i, r := range idx {
			if e != nil {
				d.putEvent(e)
			}
			e = d.copyIn(dst+uintptr(int64(i)*rowBytes), floatBytes(src[int(r)*cols:(int(r)+1)*cols]), s)
		}
		return e
	}
	// Pieces of whole rows.
	rowsPer := maxStage / rowBytes
	n := int64(len(idx)) * rowBytes
	d.stage.expect(n)
	piece := rowsPer * rowBytes
	var last *evt
	for off := int64(0); off < n; off += piece {
		l := min(piece, n-off)
		r0 := int(off / rowBytes)
		r1 := r0 + int(l/rowBytes)
		b, err := d.stage.get(l)
		if !d.must("staging", err) {
			break
		}
		d.gatherRows(b.floats(int(l/4)), src, cols, idx[r0:r1])
		d.must("host-to-device copy", cudrv.MemcpyHtoDAsync(cudrv.DevicePtr(dst+uintptr(off)), b.ptr, l, s))
		e := d.record(s, false)
		d.stage.put(b, e)
		if last != nil {
			d.putEvent(last)
		}
		last = d.record(s, false)
	}
	return last
}

// endTransfer finishes a transfer and reports its span.
func (d *Device) endTransfer(dst *tensor.Tensor, s cudrv.Stream, e *evt, begin device.Mark, fn func(start, dur int64)) {
	if fn != nil {
		d.spanOn(begin, d.markOn(s), fn)
	}
	d.finishTransfer(dst, s, e)
}

// gatherRows copies rows idx of src (rows of cols) into out, on up to
// d.threads goroutines for large gathers.
func (d *Device) gatherRows(out, src []float32, cols int, idx []int32) {
	work := len(idx) * cols
	parts := min(d.threads, max(work/(1<<16), 1), len(idx))
	if parts <= 1 {
		for i, r := range idx {
			copy(out[i*cols:(i+1)*cols], src[int(r)*cols:(int(r)+1)*cols])
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(idx) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*per, min((p+1)*per, len(idx))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				r := int(idx[i])
				copy(out[i*cols:(i+1)*cols], src[r*cols:(r+1)*cols])
			}
		}()
	}
	wg.Wait()
}

// pullPinned gathers rows of pinned host memory with a kernel on the
// history stream that reads them over the bus.
func (d *Device) pullPinned(dst *tensor.Tensor, pr pinnedRange, src []float32, idx []int32, fn func(start, dur int64)) {
	ib := d.sideUpload(d.history, int32Bytes(idx), dst, true)
	var begin device.Mark
	if fn != nil {
		begin = d.markOn(d.history)
	}
	srcDev := pr.devptr + (uintptr(unsafe.Pointer(&src[0])) - pr.start)
	var a kargs
	a.ptr(d.ptr(dst)).ptr(srcDev).ptr(ib.ptr).i32(len(idx)).i32(dst.Cols)
	d.launch("gather", elemGrid(int64(dst.Len()), d.maxBlocks), 1, 1, d.history, &a)
	e := d.record(d.history, false)
	d.freeScratch(ib, d.record(d.history, false))
	if fn != nil {
		d.spanOn(begin, d.markOn(d.history), fn)
	}
	d.setReady(dst, e)
}

// CopyToHost copies src into dst (len(dst) == src.Len()). Into pinned
// memory of AllocPinned the copy is only queued, on the history stream
// after the compute stream's earlier work (see device.PinnedHost); into
// ordinary memory the call returns once dst holds the values.
func (d *Device) CopyToHost(dst []float32, src *tensor.Tensor) {
	if len(dst) != src.Len() {
		panic(fmt.Sprintf("cuda: CopyToHost of %s into %d values", src.Shape(), len(dst)))
	}
	if len(dst) == 0 {
		return
	}
	d.enter()
	defer d.leave()
	n := int64(len(dst)) * 4
	if _, ok := d.pinnedAt(unsafe.Pointer(&dst[0]), n); ok {
		d.useOn(d.history, src, false)
		d.must("device-to-host copy", cudrv.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), cudrv.DevicePtr(d.ptr(src)), n, d.history))
		d.addReader(src, d.record(d.history, false))
		return
	}
	d.use(src)
	out := floatBytes(dst)
	d.stageOut(d.ptr(src), n, d.compute, func(b *hostBuf, off, l int64) {
		copy(out[off:off+l], b.bytes(int(l)))
	})
}

// Copy copies src into dst (same shape).
func (d *Device) Copy(dst, src *tensor.Tensor) {
	mustSame("Copy", dst, src)
	if dst.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(dst, src)
	d.must("device-to-device copy", cudrv.MemcpyDtoDAsync(cudrv.DevicePtr(d.ptr(dst)), cudrv.DevicePtr(d.ptr(src)), int64(dst.Len())*4, d.compute))
}

// Zero fills t with zeros.
func (d *Device) Zero(t *tensor.Tensor) {
	if t.Len() == 0 {
		return
	}
	d.enter()
	defer d.leave()
	d.use(t)
	d.must("memset", cudrv.MemsetD32Async(cudrv.DevicePtr(d.ptr(t)), 0, int64(t.Len()), d.compute))
}

// AllocPinned returns n zeroed float32s of page-locked host memory mapped
// into the device's address space (see device.PinnedHost).
func (d *Device) AllocPinned(n int) ([]float32, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: pinned allocation of %d values", n)
	}
	d.enter()
	defer d.leave()
	p, err := cudrv.MemHostAllocMapped(int64(n) * 4)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: pinned host allocation of %d bytes: %w", d.name, int64(n)*4, err)
	}
	dp, err := cudrv.MemHostDevicePointer(p)
	if err != nil {
		cudrv.MemFreeHost(p)
		return nil, fmt.Errorf("cuda: %s: mapping pinned host memory: %w", d.name, err)
	}
	s := unsafe.Slice((*float32)(p), n)
	clear(s)
	r := pinnedRange{start: uintptr(p), end: uintptr(p) + uintptr(n)*4, devptr: uintptr(dp)}
	d.pinMu.Lock()
	i := sort.Search(len(d.pinned), func(i int) bool { return d.pinned[i].start > r.start })
	d.pinned = append(d.pinned, pinnedRange{})
	copy(d.pinned[i+1:], d.pinned[i:])
	d.pinned[i] = r
	d.pinMu.Unlock()
	return s, nil
}

// FreePinned releases memory from AllocPinned, waiting for the history
// stream first.
func (d *Device) FreePinned(p []float32) {
	if len(p) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(&p[0]))
	d.pinMu.Lock()
	i := sort.Search(len(d.pinned), func(i int) bool { return d.pinned[i].start >= start })
	found := i < len(d.pinned) && d.pinned[i].start == start
	if found {
		d.pinned = append(d.pinned[:i], d.pinned[i+1:]...)
	}
	d.pinMu.Unlock()
	if !found {
		panic(fmt.Sprintf("cuda: %s: FreePinned of memory AllocPinned did not return", d.name))
	}
	d.enter()
	defer d.leave()
	d.must("synchronizing the history stream", d.history.Synchronize())
	d.must("freeing pinned memory", cudrv.MemFreeHost(unsafe.Pointer(&p[0])))
}

// ScatterToHost sets row idx[i] of the pinned host matrix dst to row i of
// src (indices distinct), with a kernel on the history stream that writes
// over the bus; dst must come from AllocPinned.
func (d *Device) ScatterToHost(dst []float32, src *tensor.Tensor, idx []int32) {
	cols := src.Cols
	if len(idx) > src.Rows {
		panic(fmt.Sprintf("cuda: ScatterToHost: %d indices for %s", len(idx), src.Shape()))
	}
	for _, r := range idx {
		if r < 0 || (int(r)+1)*cols > len(dst) {
			panic(fmt.Sprintf("cuda: ScatterToHost: row %d out of range (%d rows of %d)", r, len(dst)/max(cols, 1), cols))
		}
	}
	if len(idx) == 0 || cols == 0 {
		return
	}
	d.enter()
	defer d.leave()
	pr, ok := d.pinnedAt(unsafe.Pointer(&dst[0]), int64(len(dst))*4)
	if !ok {
		panic(fmt.Sprintf("cuda: %s: ScatterToHost into memory AllocPinned did not return", d.name))
	}
	ib := d.sideUpload(d.history, int32Bytes(idx), src, false)
	var a kargs
	a.ptr(pr.devptr + (uintptr(unsafe.Pointer(&dst[0])) - pr.start)).ptr(d.ptr(src)).ptr(ib.ptr).i32(len(idx)).i32(cols)
	d.launch("scatter_rows", elemGrid(int64(len(idx))*int64(cols), d.maxBlocks), 1, 1, d.history, &a)
	d.addReader(src, d.record(d.history, false))
	d.freeScratch(ib, d.record(d.history, false))
}

func mustSame(op string, a, b *tensor.Tensor) {
	device.MustSameShape(device.KindCUDA, op, a, b)
}
