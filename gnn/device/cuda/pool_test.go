package cuda

import (
	"sync"
	"testing"
)

func TestRoundSize(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 128<<10},
		{64 << 20, 64 << 20}, {64<<20 + 1, 66 << 20}, {100 << 20, 100 << 20},
	} {
		if got := roundSize(c.n); got != c.want {
			t.Errorf("roundSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestPoolReusesWithinSlack(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	a, _ := p.get(1000) // 1024
	b, _ := p.get(4000) // 4096
	p.put(a)
	p.put(b)
	if f.allocs != 2 {
		t.Fatalf("%d driver allocations", f.allocs)
	}
	// 900 rounds to 1024: reuses a exactly.
	c, _ := p.get(900)
	if c != a {
		t.Fatal("an equal rounded size must reuse the cached block")
	}
	// 3500 rounds to 3584; 4096 is within a quarter more: reused.
	d, _ := p.get(3500)
	if d != b {
		t.Fatal("a block within the slack must be reused")
	}
	p.put(d)
	// 2000 rounds to 2048; 4096 is twice that: a new block.
	e, _ := p.get(2000)
	if e == b || f.allocs != 3 {
		t.Fatalf("a block twice the size must not be reused (allocs %d)", f.allocs)
	}
	st := p.stats()
	if st.Hits != 2 || st.Misses != 3 || st.Reserved != 1024+4096+2048 || st.Cached != 4096 {
		t.Fatalf("stats %+v", st)
	}
	p.put(c)
	p.put(e)
	if err := p.emptyCache(); err != nil {
		t.Fatal(err)
	}
	if st := p.stats(); st.Reserved != 0 || st.Cached != 0 || f.used != 0 || f.syncs != 1 {
		t.Fatalf("after emptying: %+v, driver used %d, syncs %d", st, f.used, f.syncs)
	}
}

// TestPoolSmallestFit checks best fit among several candidates.
func TestPoolSmallestFit(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	var bs []*block
	for _, n := range []int64{5120, 4608, 4096} {
		b, _ := p.get(n)
		bs = append(bs, b)
	}
	for _, b := range bs {
		p.put(b)
	}
	got, _ := p.get(4100) // 4608
	if got.size != 4608 {
		t.Fatalf("got %d, want the smallest fitting 4608", got.size)
	}
}

// TestPoolFences checks that a block freed with side-stream work in flight
// is reused only after that work completes, and its fences are released.
func TestPoolFences(t *testing.T) {
	f := newFakeDriver(1 << 30)
	p := newCachingPool(f)
	a, _ := p.get(1 << 20)
	fe := &fakeFence{}
	p.put(a, fe)
	if st := p.stats(); st.Pending != 1<<20 || st.Cached != 0 {
		t.Fatalf("pending %+v", st)
	}
	b, _ := p.get(1 << 20)
	if b == a {
		t.Fatal("a block with a pending fence was reused")
	}
	fe.done = true
	c, _ := p.get(1 << 20)
	if c != a {
		t.Fatal("a block whose fence completed was not reused")
	}
	if f.released[fe] != 1 {
		t.Fatalf("fence released %d times", f.released[fe])
	}
	if st := p.stats(); st.Pending != 0 {
		t.Fatalf("pending after sweep: %+v", st)
	}
}

// TestPoolOOMFlushesCache checks that an allocation the driver refuses is
// retried after the cache (pending blocks included) went back to the
// driver, and that a real OOM is returned as the driver's error.
func TestPoolOOMFlushesCache(t *testing.T) {
	f := newFakeDriver(4 << 20)
	p := newCachingPool(f)
	a, _ := p.get(2 << 20)
	b, _ := p.get(1 << 20)
	p.put(a)
	p.put(b, &fakeFence{})
	// 3 MiB does not fit next to the 3 cached MiB: flush, then it fits.
	c, err := p.get(3 << 20)
	if err != nil {
		t.Fatalf("alloc after flush: %v", err)
	}
	st := p.stats()
	if st.Flushes != 1 || st.Reserved != 3<<20 || st.DriverFrees != 2 || f.waited != 1 {
		t.Fatalf("after flush: %+v (waited %d)", st, f.waited)
	}
	if _, err := p.get(2 << 20); !f.isOOM(err) {
		t.Fatalf("an allocation that cannot fit must fail with the driver's OOM, got %v", err)
	}
	p.put(c)
	if _, err := p.get(0); err == nil {
		t.Fatal("a request of 0 bytes must be an error")
	}
}

func TestPoolConcurrent(t *testing.T) {
	f := newFakeDriver(1 << 40)
	p := newCachingPool(f)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				b, err := p.get(int64(1+(i*7+g)%5) << 16)
				if err != nil {
					t.Error(err)
					return
				}
				p.put(b)
			}
		}(g)
	}
	wg.Wait()
	st := p.stats()
	if st.Reserved != st.Cached || st.Reserved != f.used || st.Hits+st.Misses != 4000 {
		t.Fatalf("stats %+v, driver used %d", st, f.used)
	}
	// A block of a size is taken from the driver only when none of that
	// size is free, so at most 8 blocks of each of the 5 sizes exist: with
	// 8 goroutines truly in parallel the cache may hold them all.
	if st.PeakReserved > 8*(15<<16)+40*512 {
		t.Fatalf("peak %d: the cache did not bound the working set", st.PeakReserved)
	}
}
