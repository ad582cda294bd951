package cpu

import (
	"math/bits"
	"sync"
)

// DefaultPoolLimit is the default number of bytes of freed buffers a device
// keeps for reuse.
const DefaultPoolLimit = 512 << 20

// minClass is the smallest buffer capacity (in float32s) the pool deals in.
const minClass = 64

// sizeClass rounds n up to its pool class: a multiple of an eighth of the
// enclosing power of two, so a buffer wastes at most 12.5% of its capacity.
func sizeClass(n int) int {
	if n <= minClass {
		return minClass
	}
	e := bits.Len(uint(n - 1)) // 2^e >= n > 2^(e-1)
	step := 1 << (e - 4)       // e >= 7 here, step >= 8
	return (n + step - 1) / step * step
}

// pool caches freed buffers by size class, up to limit bytes in total.
// A buffer offered to a full pool takes the place of those of the classes
// used least recently. Refused instead, it went to the garbage collector:
// training fills the pool with its batches' classes, and the chunks of an
// evaluation that followed (128 MB aggregates on synth-products) then
// allocated afresh each time, raising the heap by about 2.4 GB of garbage
// a layer.
type pool struct {
	mu     sync.Mutex
	free   map[int][][]float32
	used   map[int]uint64 // each class's last get or put, on tick's clock
	tick   uint64
	cached int64 // bytes held in free
	limit  int64
	hits   int64
	misses int64
}

func newPool(limit int64) *pool {
	return &pool{free: make(map[int][][]float32), used: make(map[int]uint64), limit: limit}
}

// get returns a buffer of capacity and length sizeClass(n) and whether it
// was recycled: a fresh buffer is zero, a recycled one holds old values.
func (p *pool) get(n int) (buf []float32, recycled bool) {
	c := sizeClass(n)
	p.mu.Lock()
	p.tick++
	p.used[c] = p.tick
	if l := p.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.free[c] = l[:len(l)-1]
		p.cached -= int64(c) * 4
		p.hits++
		p.mu.Unlock()
		return b[:c:c], true
	}
	p.misses++
	p.mu.Unlock()
	return make([]float32, c), false
}

// setLimit changes the cache bound, dropping cached buffers beyond it.
func (p *pool) setLimit(limit int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limit = limit
	for c, l := range p.free {
		for len(l) > 0 && p.cached > limit {
			l[len(l)-1] = nil
			l = l[:len(l)-1]
			p.cached -= int64(c) * 4
		}
		p.free[c] = l
	}
}

// stats returns a snapshot of the pool's counters.
func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Cached: p.cached, Limit: p.limit, Hits: p.hits, Misses: p.misses}
}

// PoolStats describes a device's cache of freed buffers.
type PoolStats struct {
	Cached int64 // bytes held for reuse (not counted by the allocator)
	Limit  int64 // bound on Cached
	Hits   int64 // allocations served from the cache
	Misses int64 // allocations that needed a new buffer
}

// put offers b (as returned by get) back to the pool; it is dropped when the
// pool is full.
func (p *pool) put(b []float32) {
	c := cap(b)
	if c < minClass || sizeClass(c) != c {
		return
	}
	bytes := int64(c) * 4
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tick++
	p.used[c] = p.tick
	if bytes > p.limit/4 {
		return // would crowd out most of the others
	}
	for p.cached+bytes > p.limit && p.evictOldest(c) {
	}
	if p.cached+bytes > p.limit {
		return
	}
	p.free[c] = append(p.free[c], b[:c])
	p.cached += bytes
}

// evictOldest drops the cached buffers of the class other than keep used
// least recently, and reports whether there was one. It holds p.mu.
func (p *pool) evictOldest(keep int) bool {
	oldest, at := 0, uint64(0)
	for c, l := range p.free {
		if c != keep && len(l) > 0 && (oldest == 0 || p.used[c] < at) {
			oldest, at = c, p.used[c]
		}
	}
	if oldest == 0 {
		return false
	}
	p.cached -= int64(len(p.free[oldest])) * int64(oldest) * 4
	delete(p.free, oldest)
	return true
}
