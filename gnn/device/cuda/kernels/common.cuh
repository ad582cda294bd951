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

// Philox4x32-10 (Salmon et al., SC11; Random123), as gnn/rng/philox: the
// block of four 32-bit words for counter ctr and key (k0, k1).
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

__device__ __forceinline__ void philox4x32_10(const unsigned ctr[4], unsigned k0, unsigned k1, unsigned out[4]) {
    unsigned x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        const unsigned hi0 = __umulhi(PHILOX_M0, x0), lo0 = PHILOX_M0 * x0;
        const unsigned hi1 = __umulhi(PHILOX_M1, x2), lo1 = PHILOX_M1 * x2;
        x0 = hi1 ^ x1 ^ k0;
        x1 = lo1;
        x2 = hi0 ^ x3 ^ k1;
        x3 = lo0;
    }
    out[0] = x0;
    out[1] = x1;
    out[2] = x2;
    out[3] = x3;
}
