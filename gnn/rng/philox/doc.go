// Package philox implements the Philox4x32-10 counter-based generator of
// Salmon, Moraes, Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2,
// 3" (SC11), as in the Random123 library, PyTorch and JAX. A block of four
// 32-bit words is a pure function of a 128-bit counter and a 64-bit key,
// so any part of a random stream can be generated independently, in any
// order and on any number of threads; the CUDA kernels implement the same
// function (gnn/device/cuda/kernels/common.cuh).
package philox
