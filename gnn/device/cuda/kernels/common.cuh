// Shared helpers of gnnscope's CUDA kernels. Every kernel is extern "C" so
// that the driver API finds it by its plain name; sizes that can exceed 2^31
// elements are long long. Row-major float32 throughout.
#pragma once

#define WARP 32

// Grid-stride loop over [0, n) with 64-bit indices.
#define GRID_STRIDE(i, n)                                                        \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

// The global index of the calling thread's warp and the number of warps in
// the grid.
__device__ __forceinline__ long long warp_id() {
    return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
}
__device__ __forceinline__ long long warp_count() {
    return ((long long)gridDim.x * blockDim.x) / WARP;
}
__device__ __forceinline__ int lane_id() { return threadIdx.x & (WARP - 1); }
