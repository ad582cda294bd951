// Package cpu is gnnscope's pure-Go compute backend: an implementation of
// device.Device that runs every kernel on the host, parallelized over a fixed
// number of goroutines.
//
// Memory: every Alloc reserves rows*cols*4 bytes through a device.Allocator,
// so a CPU device with a budget models an accelerator of that size (an
// allocation past the budget returns a *device.OOMError). Freed buffers go to
// a bounded pool keyed by size class and are reused (zeroed) by later
// allocations, so per-batch tensors do not churn the garbage collector; the
// allocator counts the bytes handed out, never the bytes cached.
//
// Determinism: every kernel gives bit-identical results for any thread count.
// Row-parallel kernels compute each output row in a fixed order; reductions
// across rows (SumRows, the loss) sum fixed-size chunks and combine them in
// chunk order; Gemm parallelizes over output tiles only, never over the inner
// dimension; DropoutMask seeds one generator per fixed chunk of rows.
//
// Gemm is a cache-blocked, packed matrix multiply with a register-tiled
// micro-kernel (AVX2/FMA assembly on amd64 CPUs that support it, pure Go
// otherwise). BenchGemm and BenchGather measure the backend on this machine.
package cpu
