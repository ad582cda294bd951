//go:build cuda

package cuda

import (
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"
)

// driver adapts the device to the caching allocator, the staging pool and
// the event clock. Its methods run with the context current.
type driver struct{ d *Device }

func (v driver) memAlloc(n int64) (uintptr, error) {
	p, err := cudrv.MemAlloc(n)
	return uintptr(p), err
}
func (v driver) memFree(p uintptr) error { return cudrv.MemFree(cudrv.DevicePtr(p)) }
func (v driver) isOOM(err error) bool    { return isOOMErr(err) }
func (v driver) fenceDone(f fence) bool  { return f.(*evt).e.Query() == nil }
func (v driver) fenceWait(f fence) error { return f.(*evt).e.Synchronize() }
func (v driver) fenceRelease(f fence)    { v.d.putEvent(f.(*evt)) }
func (v driver) syncAll() error          { return cudrv.Synchronize() }
func (v driver) hostAlloc(n int64) (unsafe.Pointer, error) {
	return cudrv.MemHostAllocMapped(n)
}
func (v driver) hostFree(p unsafe.Pointer) error { return cudrv.MemFreeHost(p) }

func (v driver) anchorEvent(now func() int64) (fence, int64, int64, error) {
	d := v.d
	e := d.event(true)
	before := now()
	if err := e.e.Record(d.timing); err != nil {
		d.putEvent(e)
		return nil, 0, 0, err
	}
	if err := e.e.Synchronize(); err != nil {
		d.putEvent(e)
		return nil, 0, 0, err
	}
	return e, before, now(), nil
}

func (v driver) elapsedMs(from, to fence) (float64, error) {
	return from.(*evt).e.Elapsed(to.(*evt).e)
}

func (v driver) releaseEvent(ev fence) { v.d.putEvent(ev.(*evt)) }
