//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// dbuf is the Handle of a tensor allocated by a Device.
type dbuf struct {
	dev   *Device
	blk   *block // nil for an empty tensor
	bytes int64  // bytes accounted by the allocator
	freed atomic.Bool

	// Side-stream work on the buffer that compute has not yet waited for:
	// a write (the copy stream filling it) and reads (the history stream
	// copying it to the host).
	hz hazards
}

// maxElems bounds one allocation so that byte counts cannot overflow.
const maxElems = math.MaxInt64 / 8

// Alloc returns a zero-filled rows×cols tensor whose bytes are reserved
// from the device's allocator (a *device.OOMError past the budget); when
// the GPU itself is out of memory, even after the cache was returned to
// the driver, the error also wraps a *device.OOMError.
func (d *Device) Alloc(rows, cols int) (*tensor.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("cuda: alloc %dx%d: negative shape", rows, cols)
	}
	if cols != 0 && rows > maxElems/cols {
		return nil, fmt.Errorf("cuda: alloc %dx%d: too large", rows, cols)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	n := int64(rows) * int64(cols)
	bytes := n * 4
	if err := d.mem.Reserve(bytes); err != nil {
		return nil, fmt.Errorf("cuda: alloc %dx%d: %w", rows, cols, err)
	}
	b := &dbuf{dev: d, bytes: bytes}
	if bytes > 0 {
		d.enter()
		blk, err := d.pool.get(bytes)
		if err != nil {
			d.leave()
			d.mem.Release(bytes)
			if isOOMErr(err) {
				st := d.mem.Stats()
				return nil, fmt.Errorf("cuda: alloc %dx%d: the GPU is out of memory (%d bytes held by the allocator): %w",
					rows, cols, d.pool.stats().Reserved, &device.OOMError{Requested: bytes, Live: st.Live, Budget: d.info.Memory})
			}
			return nil, fmt.Errorf("cuda: alloc %dx%d: %w", rows, cols, err)
		}
		b.blk = blk
		d.must("clearing a new tensor", cudrv.MemsetD32Async(cudrv.DevicePtr(blk.ptr), 0, n, d.compute))
		d.leave()
	}
	return &tensor.Tensor{Rows: rows, Cols: cols, Handle: b}, nil
}

func isOOMErr(err error) bool { return cudrv.IsOOM(err) }

// Free releases t's bytes and returns its block to the cache (reused once
// side-stream work on it has completed). Views, nil tensors, tensors of
// other devices and tensors already freed are ignored.
func (d *Device) Free(t *tensor.Tensor) {
	if t == nil || t.View {
		return
	}
	b, ok := t.Handle.(*dbuf)
	if !ok || b.dev != d || !b.freed.CompareAndSwap(false, true) {
		return
	}
	d.mem.Release(b.bytes)
	if b.blk == nil {
		return
	}
	d.pool.put(b.blk, b.hz.takeAll()...)
}

// buf returns t's buffer, panicking on a tensor of another device or one
// already freed.
func (d *Device) buf(t *tensor.Tensor) *dbuf {
	b, ok := t.Handle.(*dbuf)
	if !ok || b.dev != d {
		panic(fmt.Sprintf("cuda: %s: tensor %s was not allocated by this device", d.name, t.Shape()))
	}
	if b.freed.Load() {
		panic(fmt.Sprintf("cuda: %s: tensor %s used after Free", d.name, t.Shape()))
	}
	return b
}

// ptr returns the device address of t's first element.
func (d *Device) ptr(t *tensor.Tensor) uintptr {
	b := d.buf(t)
	if b.blk == nil {
		return 0
	}
	return b.blk.ptr + uintptr(t.Off)*4
}

// use makes the compute stream wait for side-stream work on the tensors
// (a pending copy into them, a pending copy out of them) before the kernel
// about to be queued.
func (d *Device) use(ts ...*tensor.Tensor) {
	for _, t := range ts {
		if t == nil {
			continue
		}
		for _, f := range d.buf(t).hz.takeAll() {
			d.must("waiting for a copy", d.compute.Wait(f.(*evt).e))
			d.putEvent(f.(*evt))
		}
	}
}

// useOn makes side stream s wait for the compute stream (the tensor's
// last writer or reader there) and for the side-stream work on t that the
// coming access conflicts with: a pending write, and for a write also
// every pending read (see hazards).
func (d *Device) useOn(s cudrv.Stream, t *tensor.Tensor, write bool) {
	b := d.buf(t)
	d.waitFor(s, d.compute)
	for _, f := range b.hz.forSide(write) {
		d.must("waiting for a copy", s.Wait(f.(*evt).e))
	}
}

// setReady records that a side stream wrote t; compute waits for e.
func (d *Device) setReady(t *tensor.Tensor, e *evt) {
	if old := d.buf(t).hz.setWrite(e); old != nil {
		// An earlier write, ordered before e on its stream or waited for
		// by that stream: e covers it.
		d.putEvent(old.(*evt))
	}
}

// addReader records that a side stream reads t until e.
func (d *Device) addReader(t *tensor.Tensor, e *evt) { d.buf(t).hz.addRead(e) }

// scratch returns device memory outside the tensor accounting (index
// uploads, partial sums); release it with freeScratch after queueing the
// work that uses it.
func (d *Device) scratch(bytes int64) *block {
	blk, err := d.pool.get(max(bytes, 4))
	if !d.must(fmt.Sprintf("scratch of %d bytes", bytes), err) {
		return &block{} // faulted: nothing is queued on it, freeScratch ignores it
	}
	d.scratchMu.Lock()
	d.scratchLive += blk.size
	d.scratchMax = max(d.scratchMax, d.scratchLive)
	d.scratchMu.Unlock()
	return blk
}

// freeScratch returns scratch memory; fences are side-stream work still
// using it (compute-stream work needs none).
func (d *Device) freeScratch(blk *block, fences ...fence) {
	if blk.ptr == 0 {
		return
	}
	d.scratchMu.Lock()
	d.scratchLive -= blk.size
	d.scratchMu.Unlock()
	d.pool.put(blk, fences...)
}
