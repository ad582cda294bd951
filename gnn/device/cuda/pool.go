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

// segment is one allocation from the driver. Blocks partition it: a
// request is served by a block carved from a segment, and only a segment
// whose blocks are all free and merged back into one goes back to the
// driver.
type segment struct {
	ptr   uintptr
	size  int64
	small bool   // the segment serves the small pool
	first *block // the block at ptr (never merged away: it has no predecessor)
}

type blockState uint8

const (
	blockInUse   blockState = iota // handed out by get
	blockPending                   // returned with fences not yet known to be done
	blockFree                      // in a free list, ready for reuse
	blockMerged                    // absorbed by its free predecessor; the struct is dead
)

// block is a piece of a segment handed out by the pool.
type block struct {
	ptr        uintptr
	size       int64 // bytes of the block: the request rounded up, or more when the rest was too small to split off
	fences     []fence
	seg        *segment
	prev, next *block // neighbours in the segment, by address
	state      blockState
}

// PoolStats describes the caching allocator's memory held from the driver.
// The bytes of live tensors are the device.Allocator's; these are the
// driver's view, rounding and cache included. Reserved is always
// Allocated + Cached + Pending.
type PoolStats struct {
	Reserved      int64 // bytes of segments held from the driver: allocated, cached and pending
	PeakReserved  int64 // highest Reserved
	Allocated     int64 // bytes of blocks handed out and not yet returned (rounding included)
	PeakAllocated int64 // highest Allocated
	Cached        int64 // bytes of free blocks ready for reuse
	PeakCached    int64 // highest Cached
	Pending       int64 // bytes of freed blocks waiting for side-stream work
	Segments      int64 // segments held from the driver
	Hits          int64 // requests served from the cache
	Misses        int64 // requests that allocated a segment from the driver
	Splits        int64 // free blocks split to serve a smaller request
	Merges        int64 // free blocks merged with a free neighbour
	DriverFrees   int64 // segments returned to the driver
	Flushes       int64 // times the cache was emptied to retry a failed allocation
}

// cachingPool keeps freed blocks and serves later requests from them, so
// that per-batch tensors do not call cuMemAlloc/cuMemFree (which
// synchronize the device) at every step. As PyTorch's caching allocator, it
// carves blocks from driver segments: a request takes the smallest free
// block that fits and splits off the rest, which stays free; a freed block
// merges with its free neighbours, so memory freed in one size serves
// requests of another. Requests of up to smallLimit bytes come from small
// segments of their own, so that short-lived small blocks do not pin large
// segments; requests below midLimit share segments of midSegment bytes,
// larger ones get a segment of their size. It is safe for concurrent use.
type cachingPool struct {
	mu      sync.Mutex
	drv     memDriver
	free    [2][]*block // free blocks of the large [0] and small [1] pools, sorted by size, then address
	pending []*block    // freed, waiting for fences
	segs    map[*segment]struct{}
	st      PoolStats
}

func newCachingPool(drv memDriver) *cachingPool {
	return &cachingPool{drv: drv, segs: map[*segment]struct{}{}}
}

// Sizes, as in PyTorch's CUDACachingAllocator.
const (
	blockRound    = 512      // every block is a multiple of this
	smallLimit    = 1 << 20  // requests up to this come from the small pool
	smallSegment  = 2 << 20  // the size of a small pool's segment
	midLimit      = 10 << 20 // larger requests up to this share segments of midSegment
	midSegment    = 20 << 20 //
	segmentRound  = 2 << 20  // beyond, a segment is its first request rounded up to this
	minLargeSplit = 1 << 20  // a large block is split only when more than this remains
)

// roundSize returns the bytes of the block serving a request of n bytes
// (n > 0).
func roundSize(n int64) int64 { return ceilDiv(n, blockRound) * blockRound }

// segmentSize returns the bytes of a new segment for a block of r bytes.
func segmentSize(r int64) int64 {
	if r > smallLimit && r < midLimit {
		return midSegment
	}
	return fitSegment(r)
}

// fitSegment returns the bytes of the smallest segment for a block of r
// bytes: what segmentSize falls back to when a shared segment does not
// fit on the device.
func fitSegment(r int64) int64 {
	if r <= smallLimit {
		return smallSegment
	}
	return ceilDiv(r, segmentRound) * segmentRound
}

func poolOf(small bool) int {
	if small {
		return 1
	}
	return 0
}

// get returns a block of at least n bytes (n > 0): carved from the
// smallest free block that fits, else from a new segment. When the driver
// is out of memory, the free segments go back to it and the allocation is
// retried once.
func (p *cachingPool) get(n int64) (*block, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: pool: request of %d bytes", n)
	}
	r := roundSize(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(false)
	b := p.takeLocked(r)
	if b != nil {
		p.st.Hits++
	} else {
		var err error
		if b, err = p.newSegmentLocked(r); err != nil {
			return nil, err
		}
		p.st.Misses++
	}
	p.splitLocked(b, r)
	p.st.Allocated += b.size
	p.peaksLocked()
	return b, nil
}

// newSegmentLocked allocates a segment for a block of r bytes and returns
// its one block, not in any list. Out of memory, it tries a segment of the
// block alone, then the same after flushing the cache.
func (p *cachingPool) newSegmentLocked(r int64) (*block, error) {
	size := segmentSize(r)
	ptr, err := p.drv.memAlloc(size)
	if err != nil && p.drv.isOOM(err) && size > fitSegment(r) {
		size = fitSegment(r)
		ptr, err = p.drv.memAlloc(size)
	}
	if err != nil && p.drv.isOOM(err) && (p.st.Cached > 0 || p.st.Pending > 0) {
		p.st.Flushes++
		if ferr := p.flushLocked(); ferr != nil {
			return nil, fmt.Errorf("cuda: pool: freeing the cache after %w: %w", err, ferr)
		}
		ptr, err = p.drv.memAlloc(size)
	}
	if err != nil {
		return nil, err
	}
	seg := &segment{ptr: ptr, size: size, small: r <= smallLimit}
	seg.first = &block{ptr: ptr, size: size, seg: seg, state: blockInUse}
	p.segs[seg] = struct{}{}
	p.st.Reserved += size
	p.st.Segments++
	return seg.first, nil
}

// splitLocked cuts b (not in any list) down to r bytes when enough
// remains, and frees the rest.
func (p *cachingPool) splitLocked(b *block, r int64) {
	rest := b.size - r
	if rest < blockRound || (!b.seg.small && rest <= minLargeSplit) {
		return
	}
	nb := &block{ptr: b.ptr + uintptr(r), size: rest, seg: b.seg, prev: b, next: b.next, state: blockInUse}
	if b.next != nil {
		b.next.prev = nb
	}
	b.next = nb
	b.size = r
	p.st.Splits++
	p.releaseLocked(nb)
}

// put returns a block to the cache. Fences, if any, must complete before
// the block is reused; the pool releases them. A block returned twice is
// ignored.
func (p *cachingPool) put(b *block, fences ...fence) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.state != blockInUse {
		return
	}
	p.st.Allocated -= b.size
	if len(fences) > 0 {
		b.fences = append(b.fences[:0], fences...)
		b.state = blockPending
		p.pending = append(p.pending, b)
		p.st.Pending += b.size
		return
	}
	p.releaseLocked(b)
	p.peaksLocked()
}

// takeLocked removes and returns the smallest free block of the request's
// pool with at least r bytes, or nil.
func (p *cachingPool) takeLocked(r int64) *block {
	list := p.free[poolOf(r <= smallLimit)]
	i := sort.Search(len(list), func(i int) bool { return list[i].size >= r })
	if i == len(list) {
		return nil
	}
	b := list[i]
	p.removeFreeLocked(b)
	b.state = blockInUse
	return b
}

// freeIndex returns where b sits (or would sit) in its free list.
func freeIndex(list []*block, b *block) int {
	return sort.Search(len(list), func(i int) bool {
		f := list[i]
		return f.size > b.size || (f.size == b.size && f.ptr >= b.ptr)
	})
}

func (p *cachingPool) removeFreeLocked(b *block) {
	k := poolOf(b.seg.small)
	list := p.free[k]
	i := freeIndex(list, b)
	if i == len(list) || list[i] != b {
		panic("cuda: pool: a free block is missing from its free list")
	}
	copy(list[i:], list[i+1:])
	list[len(list)-1] = nil
	p.free[k] = list[:len(list)-1]
	p.st.Cached -= b.size
}

// releaseLocked makes b (in use or pending, in no list) free: it merges
// with its free neighbours and the result enters the free list.
func (p *cachingPool) releaseLocked(b *block) {
	if pr := b.prev; pr != nil && pr.state == blockFree {
		p.removeFreeLocked(pr)
		pr.size += b.size
		pr.next = b.next
		if b.next != nil {
			b.next.prev = pr
		}
		b.state, b.prev, b.next = blockMerged, nil, nil
		b = pr
		p.st.Merges++
	}
	if nx := b.next; nx != nil && nx.state == blockFree {
		p.removeFreeLocked(nx)
		b.size += nx.size
		b.next = nx.next
		if nx.next != nil {
			nx.next.prev = b
		}
		nx.state, nx.prev, nx.next = blockMerged, nil, nil
		p.st.Merges++
	}
	b.state = blockFree
	k := poolOf(b.seg.small)
	i := freeIndex(p.free[k], b)
	p.free[k] = append(p.free[k], nil)
	copy(p.free[k][i+1:], p.free[k][i:])
	p.free[k][i] = b
	p.st.Cached += b.size
}

// sweepLocked frees pending blocks whose fences have completed (or all of
// them, waiting, when wait is set).
func (p *cachingPool) sweepLocked(wait bool) error {
	var firstErr error
	var done []*block
	keep := p.pending[:0]
	for _, b := range p.pending {
		ok := true
		for _, f := range b.fences {
			if wait {
				if err := p.drv.fenceWait(f); err != nil && firstErr == nil {
					firstErr = err
				}
			} else if !p.drv.fenceDone(f) {
				ok = false
				break
			}
		}
		if ok {
			done = append(done, b)
		} else {
			keep = append(keep, b)
		}
	}
	clear(p.pending[len(keep):])
	p.pending = keep
	for _, b := range done {
		for _, f := range b.fences {
			p.drv.fenceRelease(f)
		}
		clear(b.fences)
		b.fences = b.fences[:0]
		p.st.Pending -= b.size
		p.releaseLocked(b)
	}
	p.peaksLocked()
	return firstErr
}

// flushLocked waits for every pending block and returns every segment
// that is wholly free to the driver; segments holding a block in use stay.
func (p *cachingPool) flushLocked() error {
	err := p.sweepLocked(true)
	if serr := p.drv.syncAll(); err == nil {
		err = serr
	}
	for k := range p.free {
		keep := p.free[k][:0]
		for _, b := range p.free[k] {
			if b.prev != nil || b.next != nil {
				keep = append(keep, b)
				continue
			}
			if ferr := p.drv.memFree(b.seg.ptr); ferr != nil && err == nil {
				err = ferr
			}
			delete(p.segs, b.seg)
			p.st.Reserved -= b.seg.size
			p.st.Cached -= b.size
			p.st.Segments--
			p.st.DriverFrees++
		}
		clear(p.free[k][len(keep):])
		p.free[k] = keep
	}
	return err
}

func (p *cachingPool) peaksLocked() {
	p.st.PeakReserved = max(p.st.PeakReserved, p.st.Reserved)
	p.st.PeakAllocated = max(p.st.PeakAllocated, p.st.Allocated)
	p.st.PeakCached = max(p.st.PeakCached, p.st.Cached)
}

// emptyCache returns every wholly free segment to the driver, once pending
// blocks are done (segments with blocks in use stay).
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
