package cuda

import (
	"fmt"
	"sync"
	"testing"
)

// checkPool verifies the pool's structure against its figures: blocks
// partition their segments, no two free neighbours are left unmerged, the
// free lists hold exactly the free blocks, sorted, and Reserved is
// Allocated + Cached + Pending.
func checkPool(t *testing.T, p *cachingPool) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := poolInvariants(p); err != nil {
		t.Fatal(err)
	}
}

func poolInvariants(p *cachingPool) error {
	var reserved, allocated, cached, pending int64
	inList := map[*block]bool{}
	for k, list := range p.free {
		for i, b := range list {
			if i > 0 && freeIndex(list[:i], b) != i {
				return fmt.Errorf("free list %d out of order at %d", k, i)
			}
			if b.state != blockFree || poolOf(b.seg.small) != k {
				return fmt.Errorf("block %#x in free list %d has state %d", b.ptr, k, b.state)
			}
			inList[b] = true
		}
	}
	nfree := 0
	for seg := range p.segs {
		reserved += seg.size
		at := seg.ptr
		var prev *block
		for b := seg.first; b != nil; prev, b = b, b.next {
			if b.ptr != at || b.prev != prev || b.seg != seg || b.size <= 0 || b.size%blockRound != 0 {
				return fmt.Errorf("segment %#x: block %#x (size %d) breaks the partition", seg.ptr, b.ptr, b.size)
			}
			at += uintptr(b.size)
			switch b.state {
			case blockInUse:
				allocated += b.size
			case blockPending:
				pending += b.size
			case blockFree:
				cached += b.size
				nfree++
				if !inList[b] {
					return fmt.Errorf("free block %#x missing from its list", b.ptr)
				}
				if prev != nil && prev.state == blockFree {
					return fmt.Errorf("free neighbours %#x and %#x not merged", prev.ptr, b.ptr)
				}
			default:
				return fmt.Errorf("dead block %#x still linked", b.ptr)
			}
		}
		if at != seg.ptr+uintptr(seg.size) {
			return fmt.Errorf("segment %#x: blocks cover %d of %d bytes", seg.ptr, at-seg.ptr, seg.size)
		}
	}
	if nfree != len(inList) {
		return fmt.Errorf("%d free blocks in segments, %d in the lists", nfree, len(inList))
	}
	st := p.st
	if st.Reserved != reserved || st.Allocated != allocated || st.Cached != cached || st.Pending != pending ||
		st.Segments != int64(len(p.segs)) || st.Reserved != st.Allocated+st.Cached+st.Pending {
		return fmt.Errorf("stats %+v; blocks say reserved %d allocated %d cached %d pending %d in %d segments",
			st, reserved, allocated, cached, pending, len(p.segs))
	}
	return nil
}

func mustGet(t *testing.T, p *cachingPool, n int64) *block {
	t.Helper()
	b, err := p.get(n)
	if err != nil {
		t.Fatalf("get(%d): %v", n, err)
	}
	return b
}

func TestRoundSize(t *testing.T) {
	for _, c := range []struct{ n, want, seg, fit int64 }{
		{1, 512, 2 << 20, 2 << 20}, {512, 512, 2 << 20, 2 << 20}, {513, 1024, 2 << 20, 2 << 20},
		{1 << 20, 1 << 20, 2 << 20, 2 << 20}, {1<<20 + 1, 1<<20 + 512, 20 << 20, 2 << 20},
		{3 << 20, 3 << 20, 20 << 20, 4 << 20}, {10 << 20, 10 << 20, 10 << 20, 10 << 20},
		{64<<20 + 1, 64<<20 + 512, 66 << 20, 66 << 20},
	} {
		r := roundSize(c.n)
		if r != c.want {
			t.Errorf("roundSize(%d) = %d, want %d", c.n, r, c.want)
		}
		if got := segmentSize(r); got != c.seg {
			t.Errorf("segmentSize(%d) = %d, want %d", r, got, c.seg)
		}
		if got := fitSegment(r); got != c.fit {
			t.Errorf("fitSegment(%d) = %d, want %d", r, got, c.fit)
		}
	}
}

// TestPoolSplitsSmall checks that small requests are carved from one
// small segment and merge back into it, which then returns to the driver
// whole.
func TestPoolSplitsSmall(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	a := mustGet(t, p, 1000) // 1024
	b := mustGet(t, p, 4000) // 4096
	c := mustGet(t, p, 512)
	if f.allocs != 1 || a.seg != b.seg || b.ptr != a.ptr+1024 || c.ptr != b.ptr+4096 {
		t.Fatalf("%d driver allocations; blocks at %#x %#x %#x", f.allocs, a.ptr, b.ptr, c.ptr)
	}
	checkPool(t, p)
	st := p.stats()
	if st.Allocated != 1024+4096+512 || st.Cached != smallSegment-st.Allocated || st.Hits != 2 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
	// a and c are not neighbours; b between them merges all three and the
	// rest of the segment back into one block.
	p.put(a)
	p.put(c)
	checkPool(t, p)
	if n := len(p.free[1]); n != 2 {
		t.Fatalf("%d free blocks, want a and c+rest", n)
	}
	p.put(b)
	checkPool(t, p)
	if n := len(p.free[1]); n != 1 || p.free[1][0].size != smallSegment || p.free[1][0] != a {
		t.Fatalf("%d free blocks after merging", n)
	}
	// A block returned twice is ignored.
	p.put(b)
	checkPool(t, p)
	if err := p.emptyCache(); err != nil {
		t.Fatal(err)
	}
	if st := p.stats(); st.Reserved != 0 || st.Segments != 0 || st.DriverFrees != 1 || f.used != 0 || f.syncs != 1 {
		t.Fatalf("after emptying: %+v, driver used %d, syncs %d", st, f.used, f.syncs)
	}
}

// TestPoolSplitsLarge checks that a freed large block serves smaller
// requests, that a large remainder is split off only when more than
// minLargeSplit bytes remain, that mid-size requests share a segment, and
// that the pools do not mix.
func TestPoolSplitsLarge(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	big := mustGet(t, p, 32<<20)
	p.put(big)
	a := mustGet(t, p, 12<<20)
	if a.ptr != big.ptr || a.size != 12<<20 || f.allocs != 1 {
		t.Fatalf("12 MiB at %#x size %d, %d driver allocations", a.ptr, a.size, f.allocs)
	}
	// 20 MiB remain; 19.5 MiB would leave half a MiB: the block is not split.
	b := mustGet(t, p, 39<<19)
	if b.ptr != a.ptr+12<<20 || b.size != 20<<20 {
		t.Fatalf("19.5 MiB at %#x size %d", b.ptr, b.size)
	}
	// Requests between 1 and 10 MiB share a 20 MiB segment.
	m1 := mustGet(t, p, 3<<20)
	m2 := mustGet(t, p, 5<<20)
	if m1.seg != m2.seg || m1.seg.size != midSegment || m2.ptr != m1.ptr+3<<20 || f.allocs != 2 {
		t.Fatalf("mid-size blocks at %#x and %#x, %d driver allocations", m1.ptr, m2.ptr, f.allocs)
	}
	// A small request does not take from a large segment.
	s := mustGet(t, p, 4096)
	if !s.seg.small || f.allocs != 3 {
		t.Fatal("a small request was served by a large segment")
	}
	checkPool(t, p)
	st := p.stats()
	if st.Allocated != 32<<20+8<<20+4096 || st.Reserved != 32<<20+midSegment+smallSegment || st.Splits != 4 || st.Hits != 3 {
		t.Fatalf("stats %+v", st)
	}
	for _, x := range []*block{a, b, m1, m2, s} {
		p.put(x)
	}
	checkPool(t, p)
	if st := p.stats(); st.Allocated != 0 || st.Cached != st.Reserved || st.Merges != 4 || len(p.free[0]) != 2 {
		t.Fatalf("after freeing: %+v, %d large free blocks", st, len(p.free[0]))
	}
}

// TestPoolSmallestFit checks best fit among several free blocks.
func TestPoolSmallestFit(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	var bs []*block
	for _, n := range []int64{14 << 20, 12 << 20, 16 << 20} {
		bs = append(bs, mustGet(t, p, n))
	}
	for _, b := range bs {
		p.put(b)
	}
	got := mustGet(t, p, 12<<20-1000)
	if got != bs[1] || got.size != 12<<20 {
		t.Fatalf("got %d bytes at %#x, want the smallest fitting 12 MiB", got.size, got.ptr)
	}
	checkPool(t, p)
}

// TestPoolFences checks that a block freed with side-stream work in flight
// is reused only after that work completes, that its free neighbours are
// split and reused meanwhile without merging into it, and that it merges
// once its fence is done.
func TestPoolFences(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	seg := mustGet(t, p, 16<<20)
	p.put(seg)
	a := mustGet(t, p, 4<<20)
	b := mustGet(t, p, 4<<20)
	fe := &fakeFence{}
	p.put(a, fe)
	if st := p.stats(); st.Pending != 4<<20 || st.Cached != 8<<20 {
		t.Fatalf("pending %+v", st)
	}
	p.put(b)
	checkPool(t, p)
	if len(p.free[0]) != 1 || p.free[0][0].ptr != a.ptr+4<<20 {
		t.Fatal("a pending block merged with its free neighbour")
	}
	c := mustGet(t, p, 4<<20)
	if c.ptr == a.ptr || c.ptr != a.ptr+4<<20 || f.allocs != 1 {
		t.Fatal("a block with a pending fence was reused")
	}
	p.put(c)
	f.complete(fe)
	d := mustGet(t, p, 16<<20)
	if d.ptr != a.ptr || f.allocs != 1 {
		t.Fatal("a block whose fence completed did not merge back into its segment")
	}
	if f.released[fe] != 1 {
		t.Fatalf("fence released %d times", f.released[fe])
	}
	checkPool(t, p)
	if st := p.stats(); st.Pending != 0 || st.Allocated != 16<<20 {
		t.Fatalf("after the sweep: %+v", st)
	}
	// Emptying the cache waits for a pending split block, then gives the
	// segment back whole.
	p.put(d)
	e := mustGet(t, p, 2<<20)
	p.put(e, &fakeFence{})
	if err := p.emptyCache(); err != nil {
		t.Fatal(err)
	}
	if st := p.stats(); st.Reserved != 0 || f.used != 0 || f.waited != 1 {
		t.Fatalf("after emptying: %+v, driver used %d, waited %d", st, f.used, f.waited)
	}
}

// TestPoolOOMFlushesCache checks that a mid-size request falls back to a
// segment of its own size when a shared one does not fit, that an
// allocation the driver still refuses is retried after the wholly free
// segments (pending blocks included) went back to the driver, that a
// segment with a block in use stays, and that a real OOM is returned as
// the driver's error.
func TestPoolOOMFlushesCache(t *testing.T) {
	f := newFakeDriver(10 << 20)
	p := newCachingPool(f)
	small := mustGet(t, p, 1000) // a 2 MiB small segment, kept in use
	a := mustGet(t, p, 4<<20)
	b := mustGet(t, p, 2<<20)
	if a.seg.size != 4<<20 || b.seg.size != 2<<20 || p.stats().Flushes != 0 {
		t.Fatalf("segments of %d and %d bytes: a shared segment that does not fit must fall back to the block's size", a.seg.size, b.seg.size)
	}
	p.put(a)
	p.put(b, &fakeFence{})
	// 6 MiB do not fit next to the 8 MiB held: flush, then they fit.
	c, err := p.get(6 << 20)
	if err != nil {
		t.Fatalf("alloc after flush: %v", err)
	}
	checkPool(t, p)
	st := p.stats()
	if st.Flushes != 1 || st.Reserved != smallSegment+6<<20 || st.DriverFrees != 2 || f.waited != 1 || small.seg.ptr != small.ptr {
		t.Fatalf("after flush: %+v (waited %d)", st, f.waited)
	}
	if _, err := p.get(4 << 20); !f.isOOM(err) {
		t.Fatalf("an allocation that cannot fit must fail with the driver's OOM, got %v", err)
	}
	p.put(c)
	p.put(small)
	checkPool(t, p)
	if _, err := p.get(0); err == nil {
		t.Fatal("a request of 0 bytes must be an error")
	}
}

// TestPoolConcurrent hammers the pool from several goroutines, with small
// and large sizes and fences completed by another goroutine.
func TestPoolConcurrent(t *testing.T) {
	f := newFakeDriver(1 << 40)
	p := newCachingPool(f)
	fences := make(chan *fakeFence, 64)
	var completer sync.WaitGroup
	completer.Add(1)
	go func() {
		defer completer.Done()
		for fe := range fences {
			f.complete(fe)
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				n := int64(1+(i*7+g)%5) << 16
				if g%2 == 1 {
					n <<= 5 // 2 to 10 MiB: the large pool
				}
				b, err := p.get(n)
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					fe := &fakeFence{}
					p.put(b, fe)
					fences <- fe
				} else {
					p.put(b)
				}
			}
		}(g)
	}
	wg.Wait()
	close(fences)
	completer.Wait()
	if err := p.emptyCache(); err != nil {
		t.Fatal(err)
	}
	checkPool(t, p)
	st := p.stats()
	if st.Reserved != 0 || f.used != 0 || st.Hits+st.Misses != 4000 || st.Pending != 0 {
		t.Fatalf("stats %+v, driver used %d", st, f.used)
	}
}

// TestPoolSmallSegmentsBounded checks that the small pool holds no more
// segments than blocks live at once: a segment is allocated only when
// every segment already holds a live block (a wholly free one fits any
// small request).
func TestPoolSmallSegmentsBounded(t *testing.T) {
	f := newFakeDriver(1 << 40)
	p := newCachingPool(f)
	var live []*block
	for i := 0; i < 4000; i++ {
		if len(live) == 8 {
			k := (i * 5) % 8
			p.put(live[k])
			live = append(live[:k], live[k+1:]...)
		}
		live = append(live, mustGet(t, p, int64(1+(i*7)%5)<<16))
	}
	checkPool(t, p)
	if st := p.stats(); st.PeakReserved > 8*smallSegment {
		t.Fatalf("peak %d: more small segments than live blocks", st.PeakReserved)
	}
}

// TestPoolMemoryPattern replays the allocation pattern of gpucheck
// --memory (devcheck.Memory, 2048 MiB: tensors of 5 sizes up to half the
// total, every other one freed, then a quarter more in smaller tensors).
// Without splitting, the freed blocks did not serve the smaller requests
// and the pool reserved 1792 MiB for an allocator peak of 1280 MiB; carved
// from the freed blocks, the later tensors need no new memory.
func TestPoolMemoryPattern(t *testing.T) {
	f := newFakeDriver(1 << 40)
	p := newCachingPool(f)
	const total = 2048 << 20
	var live []*block
	var cur, peak int64
	alloc := func(bytes int64) {
		bytes = max(bytes/1024, 1) * 1024 // rows of 256 float32s
		live = append(live, mustGet(t, p, bytes))
		cur += bytes
		peak = max(peak, cur)
	}
	sizes := []int64{total / 4, total / 8, total / 8, total / 16, total / 16}
	for used := int64(0); used < total/2; {
		for _, s := range sizes {
			alloc(s)
			used += s
		}
	}
	for i := 0; i < len(live); i += 2 {
		cur -= live[i].size
		p.put(live[i])
	}
	for used := int64(0); used < total/4; used += total / 32 {
		alloc(total / 32)
	}
	checkPool(t, p)
	st := p.stats()
	t.Logf("allocator peak %d MiB, pool peak reserved %d MiB, allocated %d MiB", peak>>20, st.PeakReserved>>20, st.PeakAllocated>>20)
	if peak != 1280<<20 || st.PeakReserved > peak+peak/50 {
		t.Fatalf("allocator peak %d, pool peak reserved %d: more than 2%% over", peak, st.PeakReserved)
	}
}
