package synth

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// workerCount resolves Config.Workers.
func workerCount(w int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(w, 1)
}

// parallelFor calls fn(i) for every i in [0, n) on up to workers goroutines.
// Work items are handed out dynamically; fn must only write state owned by i
// so that the result does not depend on the schedule.
func parallelFor(workers, n int, fn func(i int)) {
	if n <= 0 {
		return
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// reporter forwards progress to the caller's callback, serialized and
// thinned out to at most about 100 calls per stage.
type reporter struct {
	fn    func(stage string, frac float64)
	mu    sync.Mutex
	stage string
	total int64
	done  int64
	last  float64
}

func (r *reporter) start(stage string, total int64) {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stage, r.total, r.done, r.last = stage, max(total, 1), 0, 0
	r.fn(stage, 0)
}

func (r *reporter) add(n int64) {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	f := min(float64(r.done)/float64(r.total), 1)
	if f >= r.last+0.01 && f < 1 {
		r.last = f
		r.fn(r.stage, f)
	}
}

func (r *reporter) finish() {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn(r.stage, 1)
}
