package cuda

import (
	"encoding/binary"
	"math"
	"sync"
	"testing"
)

func mustStage(t *testing.T, s *stagingPool, n int64) *hostBuf {
	t.Helper()
	b, err := s.get(n)
	if err != nil {
		t.Fatalf("get(%d): %v", n, err)
	}
	return b
}

func TestStageClass(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want int
	}{{1, 0}, {64 << 10, 0}, {64<<10 + 1, 1}, {1 << 20, 4}, {maxStage, stageClasses - 1}} {
		if got := stageClass(c.n); got != c.want {
			t.Errorf("stageClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestStagingReuseAfterFence checks that a buffer is handed out again only
// after the copy that used it completed, that its fence is released then,
// and that release frees everything.
func TestStagingReuseAfterFence(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	a := mustStage(t, s, 8<<20)
	if a.size != 8<<20 || len(a.floats(10)) != 10 || len(a.bytes(40)) != 40 {
		t.Fatalf("buffer of %d bytes", a.size)
	}
	// The byte and float views share the buffer.
	binary.LittleEndian.PutUint32(a.bytes(8)[4:], math.Float32bits(1.5))
	if a.floats(2)[1] != 1.5 {
		t.Fatalf("float view reads %v where the byte view wrote 1.5", a.floats(2)[1])
	}
	fa := &fakeFence{}
	s.put(a, fa)
	b := mustStage(t, s, 5<<20)
	if b == a {
		t.Fatal("a buffer was handed out while its copy was in flight")
	}
	f.complete(fa)
	c := mustStage(t, s, 8<<20)
	if c != a || f.released[fa] != 1 || c.fence != nil {
		t.Fatalf("a buffer whose copy completed was not reused (fence released %d times)", f.released[fa])
	}
	s.put(b, nil)
	s.put(c, &fakeFence{})
	if st := s.stats(); st.Pinned != 16<<20 || st.Buffers != 2 || st.Allocs != 2 || st.Waits != 0 {
		t.Fatalf("stats %+v", st)
	}
	if err := s.release(); err != nil {
		t.Fatal(err)
	}
	if s.pinnedBytes() != 0 || len(f.host) != 0 || f.waited != 1 {
		t.Fatalf("after release: %d pinned, %d host buffers, %d waits", s.pinnedBytes(), len(f.host), f.waited)
	}
	if _, err := s.get(maxStage + 1); err == nil {
		t.Fatal("a request beyond the largest class must be an error")
	}
	f.failHost = true
	if _, err := s.get(100); err == nil {
		t.Fatal("a failing pinned allocation must be an error")
	}
	if st := s.stats(); st.Pinned != 0 || st.Buffers != 0 {
		t.Fatalf("a failed allocation stayed counted: %+v", st)
	}
}

// TestStagingTransfersQueueAhead stages transfers whose copies cannot run
// yet (the copy stream waits for the compute stream), as a prefetch of the
// next batch does. With a cap of 4 buffers per class, the first 192 MiB
// transfer made the host wait for the device 8 times and each later one
// 12 times; with the budget raised by expect to two transfers, two
// transfers queue without waiting, and a third waits piece by piece for
// the oldest copy only.
func TestStagingTransfersQueueAhead(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	const pieces = 12 // 192 MiB
	s.expect(pieces * maxStage)
	var fences []*fakeFence
	transfer := func() {
		for i := 0; i < pieces; i++ {
			b := mustStage(t, s, maxStage)
			fe := &fakeFence{}
			fences = append(fences, fe)
			s.put(b, fe)
		}
	}
	transfer()
	transfer()
	if st := s.stats(); st.Waits != 0 || st.Pinned != 2*pieces*maxStage || st.Budget != 2*pieces*maxStage {
		t.Fatalf("two transfers in flight: %+v", st)
	}
	transfer()
	st := s.stats()
	if st.Waits != pieces || st.Pinned != 2*pieces*maxStage || f.waited != pieces {
		t.Fatalf("third transfer: %+v, driver waits %d", st, f.waited)
	}
	for i, fe := range fences {
		if want := i < pieces; (f.released[fe] == 1) != want {
			t.Fatalf("fence %d released %d times: the oldest copies must be waited for first", i, f.released[fe])
		}
	}
	// The budget never exceeds maxStageBudget, nor falls.
	s.expect(10 * maxStageBudget)
	s.expect(1)
	if b := s.stats().Budget; b != maxStageBudget {
		t.Fatalf("budget %d", b)
	}
}

// TestStagingSmallUploadsQueueAhead checks that many small uploads in
// flight do not make the host wait: with a cap of 8 buffers per class, 92
// of 100 uploads of 4 KiB waited for a copy.
func TestStagingSmallUploadsQueueAhead(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	for i := 0; i < 100; i++ {
		s.put(mustStage(t, s, 4096), &fakeFence{})
	}
	if st := s.stats(); st.Waits != 0 || st.Pinned != 100*classBytes(0) {
		t.Fatalf("stats %+v", st)
	}
}

// TestStagingBudget checks what happens when the budget is spent: a
// completed buffer of a larger class serves a small request, completed
// buffers of other classes are freed to make room, the host waits for the
// oldest copy that frees a usable buffer, and a request that no idle
// buffer could serve allocates beyond the budget rather than wait forever.
func TestStagingBudget(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	s.st.Budget = 4 << 20
	big := mustStage(t, s, 2<<20)
	small := []*hostBuf{mustStage(t, s, 1<<20), mustStage(t, s, 1<<20)}
	s.put(big, nil)
	// Over the budget: a 64 KiB request borrows the completed 2 MiB buffer.
	b := mustStage(t, s, 100)
	if b != big || s.stats().Borrows != 1 {
		t.Fatal("a completed larger buffer did not serve a request over the budget")
	}
	s.put(b, nil)
	// Both 1 MiB buffers in flight, one completed: a 4 MiB request frees
	// the completed ones (2 MiB and 1 MiB), not the one in flight.
	fes := []*fakeFence{{}, {done: true}}
	s.put(small[0], fes[0])
	s.put(small[1], fes[1])
	c := mustStage(t, s, 4<<20)
	st := s.stats()
	if st.Trims != 2 || st.Pinned != 5<<20 || f.hostFrees != 2 || f.released[fes[1]] != 1 || f.released[fes[0]] != 0 {
		t.Fatalf("after trimming: %+v, %d host frees", st, f.hostFrees)
	}
	// The host holds the 4 MiB buffer: another 4 MiB request cannot wait
	// for it and allocates beyond the budget.
	d := mustStage(t, s, 4<<20)
	if st := s.stats(); st.Waits != 0 || st.Pinned != 9<<20 {
		t.Fatalf("with every usable buffer held: %+v", st)
	}
	// Both in flight, the older first: a request waits for the older copy.
	fc, fd := &fakeFence{}, &fakeFence{}
	s.put(c, fc)
	s.put(d, fd)
	e := mustStage(t, s, 3<<20)
	if e != c || s.stats().Waits != 1 || f.released[fc] != 1 || f.released[fd] != 0 {
		t.Fatal("the wait was not for the oldest copy")
	}
	s.put(e, nil)
	if err := s.release(); err != nil {
		t.Fatal(err)
	}
	if st := s.stats(); st.Pinned != 0 || st.Buffers != 0 || len(f.host) != 0 {
		t.Fatalf("after release: %+v, %d host buffers", st, len(f.host))
	}
}

// TestStagingConcurrent runs gets and puts from several goroutines with
// copies completed by another, under a small budget.
func TestStagingConcurrent(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	s.st.Budget = 8 << 20
	fences := make(chan *fakeFence, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for fe := range fences {
			f.complete(fe)
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				b, err := s.get(int64(1+(i*5+g)%40) << 16)
				if err != nil {
					t.Error(err)
					return
				}
				b.bytes(1)[0] = byte(g)
				fe := &fakeFence{}
				s.put(b, fe)
				fences <- fe
			}
		}(g)
	}
	wg.Wait()
	close(fences)
	<-done
	st := s.stats()
	// Beyond the budget only when no idle buffer could serve: at most one
	// held largest buffer per goroutine.
	if st.PeakPinned > st.Budget+6*(4<<20) {
		t.Fatalf("peak pinned %d over a budget of %d", st.PeakPinned, st.Budget)
	}
	if err := s.release(); err != nil {
		t.Fatal(err)
	}
	if st := s.stats(); st.Pinned != 0 || st.Buffers != 0 || len(f.host) != 0 {
		t.Fatalf("after release: %+v", st)
	}
}

// TestStagingTrimFailure checks that a request whose room could not be
// made fails with the driver's error and leaves the pool's figures
// counting only the buffers it holds.
func TestStagingTrimFailure(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	s.st.Budget = 1 << 20
	s.put(mustStage(t, s, 1<<20), nil)
	f.failFree = true
	if _, err := s.get(2 << 20); err == nil {
		t.Fatal("a failed free of a trimmed buffer must be an error")
	}
	if st := s.stats(); st.Pinned != 0 || st.Buffers != 0 || st.Allocs != 1 || st.Trims != 1 {
		t.Fatalf("after the failure: %+v", st)
	}
}
