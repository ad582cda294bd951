// Package cpu is gnnscope's CPU compute backend: an implementation of
// device.Device in Go (with optional amd64 assembly gemm kernels) that runs
// every kernel on the host, parallelized over a fixed number of goroutines:
// the caller's and Threads-1 persistent workers the Device starts on first
// use and stops on Close.
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
// Gemm is a cache-blocked, packed matrix multiply (Goto/BLIS loop order)
// with a register-tiled micro-kernel: AVX-512 (12×32) or AVX2/FMA (6×16)
// assembly on amd64 CPUs that support them (checked with CPUID/XGETBV at
// init), a pure-Go 2×4 kernel otherwise. GemmKernel names the kernel in use;
// the environment variable GNNSCOPE_GEMM_KERNEL (a name prefix such as "go"
// or "avx2") picks another one for comparisons. Kernels differ in rounding
// (FMA), never in results across thread counts. Where A is not transposed
// the AVX2 and AVX-512 kernels read A in place instead of packing it
// (gemm_direct.go).
//
// GatherHost prefetches the rows it will copy next and copies runs of
// consecutive rows at once; random rows of a large host matrix mostly miss
// the TLB, so the matrix should be given huge pages (AdviseHugePages).
// BenchGemm, BenchGemmOp and BenchGather measure the backend on this
// machine; scripts/bench-openblas.sh measures OpenBLAS and
// scripts/bench-torch-kernels.py PyTorch (oneDNN, its BLAS) at the same
// shapes for comparison.
package cpu
