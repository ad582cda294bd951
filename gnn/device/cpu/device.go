package cpu

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

var (
	_ device.Device     = (*Device)(nil)
	_ device.HostMemory = (*Device)(nil)
)

// Device is the pure-Go CPU backend. Its methods are safe for concurrent use
// on distinct tensors; each kernel runs on up to Threads goroutines (the
// caller's and Threads-1 persistent workers the device starts on first use)
// and returns when its work is done (Sync is a no-op). Close stops the
// workers; a Device that is dropped without Close stops them when it is
// garbage collected.
type Device struct {
	threads int
	mem     *device.Allocator
	pool    *pool

	poolOnce sync.Once
	wpool    *workerPool
}

// New returns a CPU device whose kernels use threads goroutines
// (threads <= 0 means runtime.GOMAXPROCS(0)) and whose allocator enforces
// budget bytes (0 = unlimited).
func New(threads int, budget int64) *Device {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return &Device{threads: threads, mem: device.NewAllocator(budget), pool: newPool(DefaultPoolLimit)}
}

// Name returns "cpu".
func (d *Device) Name() string { return string(device.KindCPU) }

// Threads returns the number of goroutines a kernel may use.
func (d *Device) Threads() int { return d.threads }

// Mem returns the allocator that accounts this device's buffers.
func (d *Device) Mem() *device.Allocator { return d.mem }

// SetPoolLimit bounds the bytes of freed buffers kept for reuse (0 disables
// the cache). Cached bytes are real memory but are not counted by Mem.
func (d *Device) SetPoolLimit(bytes int64) { d.pool.setLimit(bytes) }

// PoolStats returns the state of the cache of freed buffers.
func (d *Device) PoolStats() PoolStats { return d.pool.stats() }

// Sync is a no-op: every CPU kernel has finished when it returns.
func (d *Device) Sync() {}

// Close stops the device's worker goroutines and waits for them to end.
// Kernels called afterwards still work, on the calling goroutine alone.
// It always returns nil.
func (d *Device) Close() error {
	d.poolOnce.Do(func() {}) // no pool is started after Close
	if d.wpool != nil {
		d.wpool.stop()
	}
	return nil
}

// allocation is the Handle of a tensor allocated by a Device: it remembers
// the owner, the full pooled buffer and whether it has been freed, so that a
// second Free (even through a copy of the Tensor struct) is detected and
// ignored instead of releasing the bytes twice.
type allocation struct {
	dev   *Device
	buf   []float32 // full capacity, returned to the pool on Free
	bytes int64     // bytes reserved from the allocator
	freed atomic.Bool
}

// maxElems bounds a single allocation so rows*cols*4 cannot overflow.
const maxElems = math.MaxInt64 / 8

// Alloc returns a zero-filled rows×cols tensor whose rows*cols*4 bytes are
// reserved from the device's allocator. Past the budget it returns an error
// wrapping *device.OOMError and the accounting is unchanged.
func (d *Device) Alloc(rows, cols int) (*tensor.Tensor, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("cpu: alloc %dx%d: negative shape", rows, cols)
	}
	if cols != 0 && rows > maxElems/cols {
		return nil, fmt.Errorf("cpu: alloc %dx%d: too large", rows, cols)
	}
	n := rows * cols
	bytes := int64(n) * 4
	if err := d.mem.Reserve(bytes); err != nil {
		return nil, fmt.Errorf("cpu: alloc %dx%d: %w", rows, cols, err)
	}
	buf, recycled := d.pool.get(n)
	data := buf[:n]
	if recycled {
		d.zero(data)
	}
	return &tensor.Tensor{Rows: rows, Cols: cols, Data: data, Handle: &allocation{dev: d, buf: buf, bytes: bytes}}, nil
}

// Free releases t's bytes and recycles its storage. Views, nil tensors,
// tensors this device did not allocate and tensors already freed are
// ignored. Free sets t.Data to nil so that a use after free fails loudly.
func (d *Device) Free(t *tensor.Tensor) {
	if t == nil || t.View {
		return
	}
	a, ok := t.Handle.(*allocation)
	if !ok || a.dev != d || !a.freed.CompareAndSwap(false, true) {
		return
	}
	t.Data = nil
	d.mem.Release(a.bytes)
	d.pool.put(a.buf)
	a.buf = nil
}

// HostView returns a rows×cols view of host: the CPU device's memory is
// the host's, so its kernels read and write host in place. Freeing the
// view releases nothing and the allocator does not count it.
func (d *Device) HostView(host []float32, rows, cols int) *tensor.Tensor {
	if rows < 0 || cols < 0 || len(host) != rows*cols {
		panic(fmt.Sprintf("cpu: HostView of %d values as %dx%d", len(host), rows, cols))
	}
	return &tensor.Tensor{Rows: rows, Cols: cols, Data: host, View: true}
}

// CopyFromHost copies src (len == dst.Len()) into dst.
func (d *Device) CopyFromHost(dst *tensor.Tensor, src []float32) {
	if len(src) != dst.Len() {
		panic(fmt.Sprintf("cpu: CopyFromHost of %d values into %s", len(src), dst.Shape()))
	}
	d.copy(dst.Data[:len(src)], src)
}

// CopyToHost copies src into dst (len(dst) == src.Len()).
func (d *Device) CopyToHost(dst []float32, src *tensor.Tensor) {
	if len(dst) != src.Len() {
		panic(fmt.Sprintf("cpu: CopyToHost of %s into %d values", src.Shape(), len(dst)))
	}
	d.copy(dst, src.Data[:len(dst)])
}

// Copy copies src into dst (same shape).
func (d *Device) Copy(dst, src *tensor.Tensor) {
	mustSame("Copy", dst, src)
	d.copy(dst.Data[:dst.Len()], src.Data[:src.Len()])
}

// Zero fills t with zeros.
func (d *Device) Zero(t *tensor.Tensor) { d.zero(t.Data[:t.Len()]) }

// copyGrain is the number of elements a worker copies or clears at least.
const copyGrain = 1 << 16

func (d *Device) copy(dst, src []float32) {
	d.parallelFor(len(dst), copyGrain, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

func (d *Device) zero(x []float32) {
	d.parallelFor(len(x), copyGrain, func(lo, hi int) { clear(x[lo:hi]) })
}

func mustSame(op string, a, b *tensor.Tensor) {
	device.MustSameShape(device.KindCPU, op, a, b)
}
