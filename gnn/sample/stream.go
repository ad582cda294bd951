package sample

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Result is one batch delivered by Stream, with where and when it was
// sampled (for per-stage timelines).
type Result struct {
	Batch *Batch
	// Err is set when the batch could not be sampled (e.g. a target out of
	// range); it is the stream's last result.
	Err error
	// Worker is the index of the goroutine that sampled the batch.
	Worker int
	// Start is when sampling began; Duration how long it took.
	Start    time.Time
	Duration time.Duration
}

// Stream samples batches[i] as batch i of the epoch on workers goroutines
// (workers <= 0 means GOMAXPROCS) and delivers the results in batch order,
// with at most 2*workers batches sampled ahead of the consumer. See
// StreamDepth.
func (n *Neighbor) Stream(ctx context.Context, epoch int, batches [][]int32, workers int) <-chan Result {
	return n.StreamDepth(ctx, epoch, batches, workers, 0)
}

// StreamDepth is Stream with an explicit look-ahead: at most depth batches
// (at least workers; depth <= 0 means 2*workers) are sampled or waiting
// beyond the ones the consumer has received, which bounds memory.
//
// The batches are identical whatever workers and depth are: batch i depends
// only on the sampler's seed, epoch, i and batches[i]. The channel closes
// after the last batch, after a result with an error, or when ctx is
// canceled (check ctx.Err()); by the time it closes every goroutine of the
// stream has finished. Cancel ctx to stop early: a consumer that stops
// reading without canceling leaves the stream's goroutines blocked.
func (n *Neighbor) StreamDepth(ctx context.Context, epoch int, batches [][]int32, workers, depth int) <-chan Result {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(batches)))
	if depth <= 0 {
		depth = 2 * workers
	}
	depth = max(depth, workers)

	out := make(chan Result)
	ctx, cancel := context.WithCancel(ctx)
	// Slot i%depth carries batch i. Batch i is dispatched only while fewer
	// than depth batches are outstanding (tokens), so batch i-depth has
	// been delivered and its slot is empty: workers never block on a slot.
	slots := make([]chan Result, depth)
	for i := range slots {
		slots[i] = make(chan Result, 1)
	}
	tokens := make(chan struct{}, depth)
	jobs := make(chan int)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // dispatcher
		defer wg.Done()
		defer close(jobs)
		for i := range batches {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for id := 0; id < workers; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := n.getWorker()
			defer n.putWorker(w)
			for i := range jobs {
				start := time.Now()
				b, err := w.Sample(epoch, i, batches[i])
				slots[i%depth] <- Result{Batch: b, Err: err, Worker: id, Start: start, Duration: time.Since(start)}
			}
		}()
	}
	go func() { // deliver in order
		defer close(out)
		defer wg.Wait()
		defer cancel()
		for i := range batches {
			var r Result
			select {
			case r = <-slots[i%depth]:
			case <-ctx.Done():
				return
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
			if r.Err != nil {
				return
			}
			<-tokens
		}
	}()
	return out
}
