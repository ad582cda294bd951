package memory

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGateNeverOvercommits: goroutines acquiring random sizes (some over
// the capacity) and holding them while they "allocate" never hold more
// than the capacity together, every request is eventually granted, and
// everything is released at the end. Run it with -race.
func TestGateNeverOvercommits(t *testing.T) {
	const capacity, workers, rounds = 1000, 8, 400
	g := NewGate(capacity)
	var live, peak atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := uint64(w)*0x9e3779b97f4a7c15 + 1
			for range rounds {
				s ^= s << 13
				s ^= s >> 7
				s ^= s << 17
				n := int64(s % (capacity + capacity/4)) // some over the capacity
				got, _, err := g.Acquire(context.Background(), n)
				if err != nil {
					t.Error(err)
					return
				}
				if got != min(n, capacity) {
					t.Errorf("asked %d, granted %d", n, got)
				}
				v := live.Add(got)
				for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
				}
				if v > capacity {
					t.Errorf("%d bytes held at once, capacity %d", v, capacity)
				}
				runtime.Gosched()
				live.Add(-got)
				g.Release(got)
			}
		}()
	}
	wg.Wait()
	st := g.Stats()
	if st.Held != 0 || st.MaxHeld > capacity || peak.Load() > capacity || st.MaxHeld < peak.Load() {
		t.Fatalf("stats %+v, observed peak %d", st, peak.Load())
	}
	if st.Waits == 0 {
		t.Log("no request waited (little contention on this machine)")
	}
}

// waitQueued spins until the gate has n waiting requests in all (no timing:
// a queued request cannot return before a Release or its context ends).
func waitQueued(g *Gate, n int64) {
	for g.Stats().Waits < n {
		runtime.Gosched()
	}
}

// TestGateFirstComeFirstServed: a small request that would fit waits
// behind an earlier large one; canceling the large one removes it from
// the queue and grants the small one; releasing wakes waiters in order.
func TestGateFirstComeFirstServed(t *testing.T) {
	g := NewGate(10)
	if n, waited, err := g.Acquire(context.Background(), 8); n != 8 || waited || err != nil {
		t.Fatalf("first acquire: %d %v %v", n, waited, err)
	}
	type res struct {
		n      int64
		waited bool
		err    error
	}
	big, small := make(chan res, 1), make(chan res, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { n, w, err := g.Acquire(ctx, 5); big <- res{n, w, err} }()
	waitQueued(g, 1)
	go func() { n, w, err := g.Acquire(context.Background(), 1); small <- res{n, w, err} }()
	waitQueued(g, 2)
	select {
	case r := <-small:
		t.Fatalf("small request granted %+v ahead of the earlier large one", r)
	default:
	}
	cancel()
	if r := <-big; r.err == nil || !errors.Is(r.err, context.Canceled) || r.n != 0 {
		t.Fatalf("canceled request: %+v", r)
	}
	if r := <-small; r.err != nil || r.n != 1 || !r.waited {
		t.Fatalf("small request: %+v", r)
	}
	if h := g.Stats().Held; h != 9 {
		t.Fatalf("held %d, want 9", h)
	}
	// An oversized request is clamped and runs alone, after the holders.
	whole := make(chan res, 1)
	go func() { n, w, err := g.Acquire(context.Background(), 50); whole <- res{n, w, err} }()
	waitQueued(g, 3)
	g.Release(8)
	select {
	case r := <-whole:
		t.Fatalf("oversized request granted %+v while 1 byte is held", r)
	default:
	}
	g.Release(1)
	if r := <-whole; r.n != 10 || r.err != nil {
		t.Fatalf("oversized request: %+v", r)
	}
	g.Release(10)
	if st := g.Stats(); st.Held != 0 || st.MaxHeld != 10 {
		t.Fatalf("stats %+v", st)
	}
}

// TestGateTryAcquire takes what is free without waiting, refuses what
// is not, what exceeds the capacity and anything while a request waits.
func TestGateTryAcquire(t *testing.T) {
	g := NewGate(100)
	if !g.TryAcquire(60) || !g.TryAcquire(40) {
		t.Fatal("60 then 40 of 100 refused")
	}
	if g.TryAcquire(1) {
		t.Fatal("took 1 byte of a full gate")
	}
	g.Release(40)
	if g.TryAcquire(101) || g.TryAcquire(-1) {
		t.Fatal("took more than the capacity, or a negative size")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() {
		_, _, err := g.Acquire(ctx, 50) // waits: 60 held
		got <- err
	}()
	for g.Stats().Waits == 0 {
		runtime.Gosched()
	}
	if g.TryAcquire(10) {
		t.Fatal("took 10 bytes past a waiting request")
	}
	g.Release(60)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if !g.TryAcquire(50) {
		t.Fatal("refused the 50 bytes left")
	}
	if st := g.Stats(); st.Held != 100 {
		t.Fatalf("held %d, want 100", st.Held)
	}
}
