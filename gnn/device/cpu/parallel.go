package cpu

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// minWork is the number of scalar operations below which a kernel runs
// inline on the calling goroutine: spawning workers costs more than it saves.
const minWork = 1 << 15

// grainRows returns the smallest number of rows worth handing to a worker
// when each row costs about perRow scalar operations.
func grainRows(perRow int) int {
	if perRow < 1 {
		perRow = 1
	}
	g := minWork / perRow
	if g < 1 {
		g = 1
	}
	return g
}

// parallelFor calls fn on disjoint ranges [lo, hi) covering [0, n), each at
// least grain long (except the last), on up to d.threads goroutines. Ranges
// are handed out dynamically so a slow core does not hold the others up; fn
// must therefore not depend on which range a goroutine gets.
func (d *Device) parallelFor(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	t := d.threads
	if t <= 1 || n <= grain {
		fn(0, n)
		return
	}
	// About four ranges per worker balances load without much overhead.
	chunk := (n + 4*t - 1) / (4 * t)
	if chunk < grain {
		chunk = grain
	}
	nchunks := (n + chunk - 1) / chunk
	d.parallelChunks(nchunks, func(c int) {
		lo := c * chunk
		fn(lo, min(lo+chunk, n))
	})
}

// parallelChunks calls fn(c) for every c in [0, nchunks) on up to d.threads
// goroutines (the caller's included) and returns when all calls have.
func (d *Device) parallelChunks(nchunks int, fn func(c int)) {
	workers := min(d.threads, nchunks)
	if workers <= 1 {
		for c := 0; c < nchunks; c++ {
			fn(c)
		}
		return
	}
	// A panic in a worker is carried to the caller and raised there again,
	// and the workers handle memory faults as the caller does
	// (debug.SetPanicOnFault): a fault reading a truncated mapped file
	// reaches the caller's recover instead of killing the process.
	faults := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(faults)
	var caught atomic.Pointer[any]
	var next atomic.Int64
	work := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= nchunks {
				return
			}
			fn(c)
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					caught.CompareAndSwap(nil, &r)
					next.Store(int64(nchunks)) // the others stop at their next chunk
				}
			}()
			debug.SetPanicOnFault(faults)
			work()
		}()
	}
	work()
	wg.Wait()
	if r := caught.Load(); r != nil {
		panic(*r)
	}
}
