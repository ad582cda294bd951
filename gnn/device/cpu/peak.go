package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// PeakResult is the FMA peak of this machine's cores: an unrolled loop of
// independent fused multiply-adds on the gemm micro-kernel's registers,
// with no loads or stores, on Threads OS threads at once. A gemm's share
// of it (its GFLOPS over GFLOPS here, at the same threads) says how close
// the product comes to the arithmetic limit.
type PeakResult struct {
	Threads int
	Kernel  string        // the loop measured ("" where none: Supported false)
	Iters   int           // rounds timed
	PerOp   time.Duration // median time of one round (every thread's loop)
	GFLOPS  float64       // all threads
	// GFLOPSPerThread is GFLOPS / Threads: one core's peak on an
	// unloaded machine.
	GFLOPSPerThread float64
	// CPUTime is the median CPU time of one round, and GFLOPSPerCPUSecond
	// the flops per second of CPU received (the per-core peak on a loaded
	// machine, where threads wait for a core).
	CPUTime            time.Duration
	GFLOPSPerCPUSecond float64
	Supported          bool
}

// String formats the result on one line.
func (r PeakResult) String() string {
	if !r.Supported {
		return fmt.Sprintf("peak threads=%d: no FMA loop for this micro-kernel (%s)", r.Threads, GemmKernel())
	}
	return fmt.Sprintf("peak %s threads=%d: %.1f GFLOP/s (%.1f per thread, %.1f per CPU-second)",
		r.Kernel, r.Threads, r.GFLOPS, r.GFLOPSPerThread, r.GFLOPSPerCPUSecond)
}

// peakIters is one thread's loop length per round: about 2·10⁸ flops at
// AVX2 widths, a few tens of milliseconds on a current core.
const peakIters = 1 << 20

// BenchPeak measures the FMA peak on threads OS threads, repeating for at
// least minTime.
func BenchPeak(threads int, minTime time.Duration) PeakResult {
	loop, name, perIter, ok := peakLoop()
	res := PeakResult{Threads: threads, Kernel: name, Supported: ok}
	if !ok || threads < 1 {
		return res
	}
	round := func() {
		var wg sync.WaitGroup
		for range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				loop(peakIters)
			}()
		}
		wg.Wait()
	}
	round() // warm up: the units' power-up and the threads
	tm := timeMedian(minTime, round)
	flops := float64(threads) * float64(peakIters) * float64(perIter)
	res.Iters, res.PerOp = tm.runs, tm.wall
	res.GFLOPS = flops / tm.wall.Seconds() / 1e9
	res.GFLOPSPerThread = res.GFLOPS / float64(threads)
	if tm.cpu > 0 {
		res.CPUTime = tm.cpu
		res.GFLOPSPerCPUSecond = flops / tm.cpu.Seconds() / 1e9
	}
	return res
}
