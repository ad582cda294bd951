package cpu

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// minWork is the number of scalar operations below which a kernel runs
// inline on the calling goroutine: handing work to other threads costs more
// than it saves.
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
// goroutines (the caller's and the device's workers) and returns when all
// calls have. Chunks are handed out one at a time from a shared counter.
//
// A panic in any call is carried to the caller and raised there again once
// the calls under way have returned (no further chunk starts after it), and
// the workers handle memory faults as the caller does
// (debug.SetPanicOnFault): a fault reading a truncated mapped file reaches
// the caller's recover instead of killing the process.
//
// The caller works through the chunks itself, so a call never waits for a
// busy worker: concurrent and nested calls (fn calling parallelChunks) make
// progress even when every worker is taken.
func (d *Device) parallelChunks(nchunks int, fn func(c int)) {
	helpers := min(d.threads, nchunks) - 1
	if helpers <= 0 {
		for c := 0; c < nchunks; c++ {
			fn(c)
		}
		return
	}
	faults := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(faults)
	j := &job{fn: fn, n: int64(nchunks), faults: faults}
	d.workers().offer(j, helpers)
	j.run()
	j.finish()
}

// job is one parallelChunks call shared between the caller and the workers
// that join it.
type job struct {
	fn     func(c int)
	n      int64
	next   atomic.Int64
	faults bool
	caught atomic.Pointer[any]

	mu     sync.Mutex
	closed bool // the caller has stopped taking chunks: no one joins now
	wg     sync.WaitGroup
	active atomic.Int32 // workers that joined and have not returned
}

// run takes chunks until none is left or a call panicked.
func (j *job) run() {
	defer func() {
		if r := recover(); r != nil {
			j.caught.CompareAndSwap(nil, &r)
			j.next.Store(j.n) // the others stop at their next chunk
		}
	}()
	for {
		c := j.next.Add(1) - 1
		if c >= j.n {
			return
		}
		j.fn(int(c))
	}
}

// join runs the job on a worker unless the caller has finished it.
func (j *job) join() {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return
	}
	j.wg.Add(1)
	j.active.Add(1)
	j.mu.Unlock()
	defer j.wg.Done()
	debug.SetPanicOnFault(j.faults)
	j.run()
	j.active.Add(-1)
}

// finish waits for the workers that joined and raises a panic one of the
// calls raised.
func (j *job) finish() {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	// Wait briefly without parking: the workers usually end within
	// microseconds of the caller.
	for start := time.Now(); j.active.Load() > 0 && time.Since(start) < workerSpin; {
		spinPause()
	}
	j.wg.Wait()
	if r := j.caught.Load(); r != nil {
		panic(*r)
	}
}

// workerPool is a Device's set of persistent worker goroutines, started on
// the first parallel call and stopped by Device.Close (or, for a Device that
// is never closed, once it is garbage).
type workerPool struct {
	jobs chan *job
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// workers returns the device's worker pool, starting it on first use (nil
// after Close).
func (d *Device) workers() *workerPool {
	d.poolOnce.Do(func() {
		p := &workerPool{jobs: make(chan *job, 4*d.threads), quit: make(chan struct{})}
		p.wg.Add(d.threads - 1)
		for w := 1; w < d.threads; w++ {
			go p.loop()
		}
		d.wpool = p
		// The workers do not refer to d, so an unclosed Device can still
		// become garbage; its workers are stopped then.
		runtime.AddCleanup(d, func(p *workerPool) { p.signal() }, p)
	})
	return d.wpool
}

func (p *workerPool) loop() {
	defer p.wg.Done()
	for {
		if j := p.poll(); j != nil {
			j.join()
			continue
		}
		select {
		case j := <-p.jobs:
			j.join()
		case <-p.quit:
			return
		}
	}
}

// workerSpin is how long a worker that finished a job keeps looking for
// the next one before it parks, and how long a caller waits for the
// workers of its job before it parks. Waking a parked goroutine costs tens
// of microseconds, as much as a small product takes (1024×100×256: about
// 300 µs on two threads), and a layer's products come back to back.
const workerSpin = 50 * time.Microsecond

// spinPause lets the goroutines waiting for this one's P run, then other
// threads waiting for its core: a spin holds both.
func spinPause() {
	runtime.Gosched()
	osYield()
}

// poll waits up to workerSpin for a job, yielding the core between looks;
// it returns nil when none came.
func (p *workerPool) poll() *job {
	start := time.Now()
	for {
		select {
		case j := <-p.jobs:
			return j
		default:
		}
		if time.Since(start) > workerSpin {
			return nil
		}
		spinPause()
	}
}

// offer posts j for up to n idle workers without blocking: when the queue
// is full, or the device is closed (p nil or stopped), the caller does the
// work itself.
func (p *workerPool) offer(j *job, n int) {
	if p == nil {
		return
	}
	for range n {
		select {
		case <-p.quit:
			return
		default:
		}
		select {
		case p.jobs <- j:
		default:
			return
		}
	}
}

// signal tells the workers to end once they finish what they run.
func (p *workerPool) signal() { p.once.Do(func() { close(p.quit) }) }

// stop ends the workers and waits for them; calls after it run on the
// caller alone.
func (p *workerPool) stop() {
	p.signal()
	p.wg.Wait()
}
