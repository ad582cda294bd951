// Shared helpers of gnnscope's CUDA kernels. Every kernel is extern "C" so
// that the driver API finds it by its plain name; sizes that can exceed 2^31
// elements are long long. Row-major float32 throughout.
#pragma once

#define WARP 32

// Grid-stride loop over [0, n) with 64-bit indices.
#define GRID_STRIDE(i, n)                                                        \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

// Grid-stride loop over [0, n) with indices of type I.
#define GRID_STRIDE_T(I, i, n)                                                 \
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < (I)(n); \
         i += (I)blockDim.x * gridDim.x)

// index32 says whether a grid-stride loop over [0, n) may run on 32-bit
// unsigned indices: n plus the grid's stride is at most 2^32 - 1, so no
// index, and no index plus the stride, wraps. 32-bit division and modulo
// take a fraction of the instructions of 64-bit ones. The launch geometry
// (geometry.go) caps the stride far below 2^31, so every array below 2^31
// elements takes the 32-bit path; the branch is uniform over the grid.
__device__ __forceinline__ bool index32(long long n) {
    return n + (long long)blockDim.x * gridDim.x <= 0xffffffffLL;
}

// The global index of the calling thread's warp and the number of warps in
// the grid.
__device__ __forceinline__ long long warp_id() {
    return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
}
__device__ __forceinline__ long long warp_count() {
    return ((long long)gridDim.x * blockDim.x) / WARP;
}
__device__ __forceinline__ int lane_id() { return threadIdx.x & (WARP - 1); }

