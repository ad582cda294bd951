package cuda

import (
	"fmt"
	"sort"
	"sync"
)

// fence is an opaque marker of work queued on a side stream (a CUDA event):
// a block freed while such work may still touch it is reused only once its
// fences have completed. Work on the compute stream needs no fence: a block
// is only ever reused by work queued after it, on the same stream, or by
// side-stream work that first waits for the compute stream.
type fence any

// memDriver is what the caching allocator needs from the driver; the CUDA
// device implements it with cuMemAlloc, cuMemFree and events, tests with a
// fake.
type memDriver interface {
	memAlloc(bytes int64) (uintptr, error)
	memFree(ptr uintptr) error
	isOOM(err error) bool
	fenceDone(f fence) bool // the fence has completed (does not wait)
	fenceWait(f fence) error
	fenceRelease(f fence) // the pool no longer needs the fence
	syncAll() error       // wait for all queued work before memory goes back to the driver
}

// block is one allocation from the driver.
type block struct {
	ptr    uintptr
	size   int64 // bytes held from the driver (the request rounded up)
	fences []fence
}

// PoolStats describes the caching allocator's memory held from the driver.
// The bytes of live tensors are the device.Allocator's; these are the
// driver's view, rounding and cache included.
type PoolStats struct {
	Reserved     int64 // bytes held from the driver: in use, cached and pending
	PeakReserved int64 // highest Reserved
	Cached       int64 // bytes of free blocks ready for reuse
	Pending      int64 // bytes of freed blocks waiting for side-stream work
	Hits         int64 // requests served from the cache
	Misses       int64 // requests that allocated from the driver
	DriverFrees  int64 // blocks returned to the driver
	Flushes      int64 // times the cache was emptied to retry a failed allocation
}

// cachingPool keeps freed blocks and serves later requests from them, so
// that per-batch tensors do not call cuMemAlloc/cuMemFree (which
// synchronize the device) at every step. It is safe for concurrent use.
type cachingPool struct {
	mu      sync.Mutex
	drv     memDriver
	free    []*block // sorted by size, then address
	pending []*block // freed, waiting for fences
	st      PoolStats
}

func newCachingPool(drv memDriver) *cachingPool { return &cachingPool{drv: drv} }

// Size rounding: fine for small blocks, coarser for large ones so that
// batches of slightly different shapes reuse each other's blocks.
const (
	roundSmall     = 512       // granularity up to 1 MiB
	smallLimit     = 1 << 20   //
	roundMedium    = 128 << 10 // up to 64 MiB
	mediumLimit    = 64 << 20  //
	roundLarge     = 2 << 20   // beyond
	reuseSlackFrac = 4         // a cached block up to 1/4 larger than asked is reused
)

// roundSize returns the bytes a request of n bytes holds (n > 0).
func roundSize(n int64) int64 {
	g := int64(roundLarge)
	switch {
	case n <= smallLimit:
		g = roundSmall
	case n <= mediumLimit:
		g = roundMedium
	}
	return ceilDiv(n, g) * g
}

// get returns a block of at least n bytes (n > 0): a cached one if one fits
// within the slack, else a new one from the driver. When the driver is out
// of memory, the cache is returned to it and the allocation retried once.
func (p *cachingPool) get(n int64) (*block, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: pool: request of %d bytes", n)
	}
	r := roundSize(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(false)
	if b := p.takeLocked(r); b != nil {
		p.st.Hits++
		return b, nil
	}
	ptr, err := p.drv.memAlloc(r)
	if err != nil && p.drv.isOOM(err) && (len(p.free) > 0 || len(p.pending) > 0) {
		p.st.Flushes++
		if ferr := p.flushLocked(); ferr != nil {
			return nil, fmt.Errorf("cuda: pool: freeing the cache after %w: %w", err, ferr)
		}
		ptr, err = p.drv.memAlloc(r)
	}
	if err != nil {
		return nil, err
	}
	p.st.Misses++
	p.st.Reserved += r
	if p.st.Reserved > p.st.PeakReserved {
		p.st.PeakReserved = p.st.Reserved
	}
	return &block{ptr: ptr, size: r}, nil
}

// put returns a block to the cache. Fences, if any, must complete before
// the block is reused; the pool releases them.
func (p *cachingPool) put(b *block, fences ...fence) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.fences = append(b.fences[:0], fences...)
	if len(b.fences) > 0 {
		p.pending = append(p.pending, b)
		p.st.Pending += b.size
		return
	}
	p.insertLocked(b)
}

// takeLocked removes and returns the smallest cached block of at least r
// bytes and at most r plus the slack, or nil.
func (p *cachingPool) takeLocked(r int64) *block {
	i := sort.Search(len(p.free), func(i int) bool { return p.free[i].size >= r })
	if i == len(p.free) || p.free[i].size > r+r/reuseSlackFrac {
		return nil
	}
	b := p.free[i]
	p.free = append(p.free[:i], p.free[i+1:]...)
	p.st.Cached -= b.size
	return b
}

func (p *cachingPool) insertLocked(b *block) {
	i := sort.Search(len(p.free), func(i int) bool {
		f := p.free[i]
		return f.size > b.size || (f.size == b.size && f.ptr >= b.ptr)
	})
	p.free = append(p.free, nil)
	copy(p.free[i+1:], p.free[i:])
	p.free[i] = b
	p.st.Cached += b.size
}

// sweepLocked moves pending blocks whose fences have completed (or all of
// them, waiting, when wait is set) to the cache.
func (p *cachingPool) sweepLocked(wait bool) error {
	var firstErr error
	keep := p.pending[:0]
	for _, b := range p.pending {
		done := true
		for _, f := range b.fences {
			if wait {
				if err := p.drv.fenceWait(f); err != nil && firstErr == nil {
					firstErr = err
				}
			} else if !p.drv.fenceDone(f) {
				done = false
				break
			}
		}
		if !done {
			keep = append(keep, b)
			continue
		}
		for _, f := range b.fences {
			p.drv.fenceRelease(f)
		}
		b.fences = b.fences[:0]
		p.st.Pending -= b.size
		p.insertLocked(b)
	}
	clear(p.pending[len(keep):])
	p.pending = keep
	return firstErr
}

// flushLocked waits for every pending block and returns every cached
// block to the driver.
func (p *cachingPool) flushLocked() error {
	err := p.sweepLocked(true)
	if serr := p.drv.syncAll(); err == nil {
		err = serr
	}
	for _, b := range p.free {
		if ferr := p.drv.memFree(b.ptr); ferr != nil && err == nil {
			err = ferr
		}
		p.st.Reserved -= b.size
		p.st.DriverFrees++
	}
	clear(p.free)
	p.free = p.free[:0]
	p.st.Cached = 0
	return err
}

// emptyCache returns every cached and pending block to the driver (blocks
// in use stay).
func (p *cachingPool) emptyCache() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked()
}

// stats returns a snapshot of the pool's figures.
func (p *cachingPool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}
