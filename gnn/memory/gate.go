package memory

import (
	"context"
	"fmt"
	"sync"
)

// Gate shares a number of device bytes between concurrent consumers (the
// trainer's batches and an overlapped evaluator's chunks) by their
// predicted peaks: a weighted semaphore whose units are bytes. A consumer
// acquires its predicted bytes before it allocates and releases them once
// it has freed its tensors, so that as long as every consumer's real peak
// stays within its grant the consumers together never allocate more than
// the gate's capacity. Consumers whose grants fit together run at the same
// time; one that does not fit waits until enough is released.
//
// Waiters are served first come, first served: a request that does not
// fit blocks the requests behind it, however small, so a large one (a
// training batch near the budget) waits for at most what was granted
// before it and is never starved by a stream of small ones. A request
// larger than the capacity is granted the whole capacity (it then runs
// alone). A Gate is safe for concurrent use.
type Gate struct {
	mu       sync.Mutex
	capacity int64
	held     int64
	maxHeld  int64
	waits    int64
	queue    []*gateWaiter
}

type gateWaiter struct {
	n     int64
	ready chan struct{} // closed once the bytes are granted
}

// NewGate returns a gate over capacity bytes (at least 1).
func NewGate(capacity int64) *Gate {
	return &Gate{capacity: max(capacity, 1)}
}

// Capacity returns the bytes the gate shares.
func (g *Gate) Capacity() int64 { return g.capacity }

// Grant returns what Acquire(n) would grant: n clamped to [0, capacity].
func (g *Gate) Grant(n int64) int64 { return min(max(n, 0), g.capacity) }

// Acquire waits until Grant(n) bytes are free and no earlier request is
// waiting, takes them and returns the grant and whether it had to wait.
// The caller must Release the grant. When ctx ends first, nothing is held
// and ctx's error is returned.
func (g *Gate) Acquire(ctx context.Context, n int64) (granted int64, waited bool, err error) {
	n = g.Grant(n)
	g.mu.Lock()
	if len(g.queue) == 0 && g.held+n <= g.capacity {
		g.take(n)
		g.mu.Unlock()
		return n, false, nil
	}
	w := &gateWaiter{n: n, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.waits++
	g.mu.Unlock()
	select {
	case <-w.ready:
		return n, true, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			g.held -= n
		default:
			for i, q := range g.queue {
				if q == w {
					g.queue = append(g.queue[:i], g.queue[i+1:]...)
					break
				}
			}
		}
		g.grantLocked()
		return 0, true, fmt.Errorf("waiting for %d bytes of device memory: %w", n, ctx.Err())
	}
}

// TryAcquire takes n bytes when they are free and no request is waiting,
// without waiting, and reports whether it did; a request larger than the
// capacity is refused (it is not clamped as Acquire's is). The caller
// must Release what it took.
func (g *Gate) TryAcquire(n int64) bool {
	if n < 0 || n > g.capacity {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 || g.held+n > g.capacity {
		return false
	}
	g.take(n)
	return true
}

// Release returns n bytes acquired earlier and wakes the waiters that now
// fit, in order.
func (g *Gate) Release(n int64) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held -= n
	if g.held < 0 {
		panic(fmt.Sprintf("memory gate: released %d bytes more than held", -g.held))
	}
	g.grantLocked()
}

// grantLocked grants the waiters at the head of the queue while they fit.
func (g *Gate) grantLocked() {
	for len(g.queue) > 0 && g.held+g.queue[0].n <= g.capacity {
		w := g.queue[0]
		g.queue = g.queue[1:]
		g.take(w.n)
		close(w.ready)
	}
}

func (g *Gate) take(n int64) {
	g.held += n
	g.maxHeld = max(g.maxHeld, g.held)
}

// GateStats is a snapshot of a gate's accounting.
type GateStats struct {
	Capacity int64 // bytes shared
	Held     int64 // bytes granted and not yet released
	MaxHeld  int64 // the most bytes granted at once
	Waits    int64 // requests that had to wait
}

// Stats returns a snapshot of the gate's accounting.
func (g *Gate) Stats() GateStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GateStats{Capacity: g.capacity, Held: g.held, MaxHeld: g.maxHeld, Waits: g.waits}
}
