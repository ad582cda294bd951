package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestParallelChunksOnce checks that every chunk runs exactly once, for
// more and fewer chunks than threads, on fresh and reused devices.
func TestParallelChunksOnce(t *testing.T) {
	for _, th := range []int{1, 2, 3, 8} {
		d := New(th, 0)
		for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
			for rep := 0; rep < 3; rep++ {
				counts := make([]atomic.Int32, n)
				d.parallelChunks(n, func(c int) { counts[c].Add(1) })
				for c := range counts {
					if got := counts[c].Load(); got != 1 {
						t.Fatalf("threads=%d n=%d: chunk %d ran %d times", th, n, c, got)
					}
				}
			}
		}
		d.Close()
	}
}

// TestParallelForCovers checks that the ranges tile [0, n) exactly.
func TestParallelForCovers(t *testing.T) {
	d := New(3, 0)
	defer d.Close()
	for _, n := range []int{1, 5, 100, 12345} {
		for _, grain := range []int{0, 1, 7, 1000, 100000} {
			seen := make([]atomic.Int32, n)
			d.parallelFor(n, grain, func(lo, hi int) {
				if lo >= hi {
					t.Errorf("empty range [%d, %d)", lo, hi)
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if seen[i].Load() != 1 {
					t.Fatalf("n=%d grain=%d: index %d covered %d times", n, grain, i, seen[i].Load())
				}
			}
		}
	}
}

// TestParallelPanic checks that a panic in any chunk, on a worker or on the
// caller, reaches the caller with its value, and that the device works on
// afterwards.
func TestParallelPanic(t *testing.T) {
	d := New(2, 0)
	defer d.Close()
	for _, bad := range []int{0, 1, 17, 99} {
		got := func() (r any) {
			defer func() { r = recover() }()
			d.parallelChunks(100, func(c int) {
				if c == bad {
					panic(fmt.Sprintf("chunk %d", c))
				}
			})
			return nil
		}()
		if got != fmt.Sprintf("chunk %d", bad) {
			t.Fatalf("panic in chunk %d: caller recovered %v", bad, got)
		}
		var sum atomic.Int64
		d.parallelChunks(100, func(c int) { sum.Add(int64(c)) })
		if sum.Load() != 4950 {
			t.Fatalf("after a panic: sum %d, want 4950", sum.Load())
		}
	}
}

// TestParallelPanicOnFault checks that the workers run with the caller's
// debug.SetPanicOnFault setting, whichever it is.
func TestParallelPanicOnFault(t *testing.T) {
	d := New(3, 0)
	defer d.Close()
	old := debug.SetPanicOnFault(false)
	defer debug.SetPanicOnFault(old)
	for _, want := range []bool{true, false, true} {
		debug.SetPanicOnFault(want)
		var wrong atomic.Int32
		var onOthers atomic.Int32
		caller := goid()
		d.parallelChunks(300, func(c int) {
			cur := debug.SetPanicOnFault(false) // read, and restore below
			debug.SetPanicOnFault(cur)
			if cur != want {
				wrong.Add(1)
			}
			if goid() != caller {
				onOthers.Add(1)
			}
			time.Sleep(10 * time.Microsecond) // let the workers join
		})
		if wrong.Load() != 0 {
			t.Fatalf("SetPanicOnFault(%v): %d chunks ran with the other setting", want, wrong.Load())
		}
		t.Logf("SetPanicOnFault(%v): %d of 300 chunks ran on workers", want, onOthers.Load())
	}
}

// goid identifies the calling goroutine by its stack header.
func goid() string {
	buf := make([]byte, 32)
	buf = buf[:runtime.Stack(buf, false)]
	return string(buf[:min(len(buf), 20)])
}

// TestParallelNestedConcurrent runs calls from several goroutines at once,
// each chunk making a nested call: every worker may be taken, and all must
// still finish with every chunk run once.
func TestParallelNestedConcurrent(t *testing.T) {
	d := New(3, 0)
	defer d.Close()
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 20; rep++ {
				d.parallelChunks(8, func(int) {
					d.parallelFor(50, 1, func(lo, hi int) { total.Add(int64(hi - lo)) })
				})
			}
		}()
	}
	wg.Wait()
	if want := int64(4 * 20 * 8 * 50); total.Load() != want {
		t.Fatalf("nested calls covered %d elements, want %d", total.Load(), want)
	}
}

// waitGoroutines waits until at most n goroutines run, or fails.
func waitGoroutines(t *testing.T, n int, gc bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want at most %d", runtime.NumGoroutine(), n)
		}
		if gc {
			runtime.GC()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWorkerPoolNoLeak checks that Close stops the workers, that a closed
// device still computes, and that a device dropped without Close has its
// workers stopped once it is garbage.
func TestWorkerPoolNoLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	d := New(4, 0)
	var n atomic.Int64
	d.parallelChunks(64, func(int) { n.Add(1) })
	if runtime.NumGoroutine() < base+3 {
		t.Fatalf("%d goroutines after a parallel call, want %d workers more than %d", runtime.NumGoroutine(), 3, base)
	}
	d.Close()
	waitGoroutines(t, base, false)
	d.parallelChunks(64, func(int) { n.Add(1) })
	d.Close() // twice is fine
	if n.Load() != 128 {
		t.Fatalf("ran %d chunks, want 128", n.Load())
	}

	func() {
		d := New(4, 0)
		d.parallelChunks(64, func(int) { n.Add(1) })
	}()
	waitGoroutines(t, base, true)
}
