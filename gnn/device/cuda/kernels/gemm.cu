// Tiled single-precision matrix multiply for row-major storage:
//
//   C = alpha * op(A) * op(B) + beta * C
//
// op(A) is M×K (A stored M×K with row length lda, or K×M when transposed),
// op(B) is K×N (B stored K×N with row length ldb, or N×K when transposed),
// C is M×N with row length ldc. Each 256-thread block computes a 64×64 tile
// of C from 16-deep slices of op(A) and op(B) staged in shared memory; every
// thread accumulates a 4×4 register tile whose rows and columns are 16
// apart, so shared-memory reads are conflict-free broadcasts. Global loads
// are coalesced for every transpose variant: each variant reads its slice
// along the storage's contiguous dimension.
//
// beta == 0 ignores C's old contents (NaNs included). With a K split
// (gridDim.z > 1) every z-slice sums its own range of K into part
// (gridDim.z × M × N, alpha applied, no beta), and gemm_reduce adds the
// slices in order; both are deterministic, whatever the GPU.
#include "common.cuh"

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4

template <bool TA, bool TB>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                                          const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                                          int ldc, float* __restrict__ part, int kchunk) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int kbeg = 0, kend = K;
    if (part != nullptr) {
        kbeg = blockIdx.z * kchunk;
        kend = min(K, kbeg + kchunk);
    }
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        // Stage op(A)[m0:m0+64, k0:k0+16] as As[k][m].
#pragma unroll
        for (int l = 0; l < (BM * BK) / 256; l++) {
            int idx = tid + l * 256;
            int r, c;  // r: row of op(A) (m), c: column (k)
            if (TA) {
                c = idx / BM;
                r = idx % BM;  // consecutive threads: consecutive m, contiguous in A (K×M)
            } else {
                r = idx / BK;
                c = idx % BK;  // consecutive threads: consecutive k, contiguous in A (M×K)
            }
            int gm = m0 + r, gk = k0 + c;
            float v = 0.f;
            if (gm < M && gk < kend) v = TA ? A[(long long)gk * lda + gm] : A[(long long)gm * lda + gk];
            As[c][r] = v;
        }
        // Stage op(B)[k0:k0+16, n0:n0+64] as Bs[k][n].
#pragma unroll
        for (int l = 0; l < (BN * BK) / 256; l++) {
            int idx = tid + l * 256;
            int r, c;  // r: row of op(B) (k), c: column (n)
            if (TB) {
                c = idx / BK;
                r = idx % BK;  // consecutive threads: consecutive k, contiguous in B (N×K)
            } else {
                r = idx / BN;
                c = idx % BN;  // consecutive threads: consecutive n, contiguous in B (K×N)
            }
            int gk = k0 + r, gn = n0 + c;
            float v = 0.f;
            if (gk < kend && gn < N) v = TB ? B[(long long)gn * ldb + gk] : B[(long long)gk * ldb + gn];
            Bs[r][c] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int gm = m0 + ty + 16 * i;
        if (gm >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int gn = n0 + tx + 16 * j;
            if (gn >= N) continue;
            if (part != nullptr) {
                part[((long long)blockIdx.z * M + gm) * N + gn] = alpha * acc[i][j];
            } else {
                long long o = (long long)gm * ldc + gn;
                float v = alpha * acc[i][j];
                if (beta != 0.f) v += beta * C[o];
                C[o] = v;
            }
        }
    }
}

#define GEMM_ENTRY(name, TA, TB)                                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                                       \
        name(int M, int N, int K, float alpha, const float* __restrict__ A, int lda, const float* __restrict__ B, \
             int ldb, float beta, float* __restrict__ C, int ldc, float* __restrict__ part, int kchunk) {      \
        gemm_tile<TA, TB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, part, kchunk);                      \
    }

GEMM_ENTRY(gemm_nn, false, false)
GEMM_ENTRY(gemm_nt, false, true)
GEMM_ENTRY(gemm_tn, true, false)
GEMM_ENTRY(gemm_tt, true, true)

// gemm_reduce_loop is gemm_reduce with element indices of type I (32-bit
// where index32 allows: the division and modulo by N are the costliest
// integer operations of the loop).
template <typename I>
__device__ __forceinline__ void gemm_reduce_loop(I mn, I N, int splits, const float* __restrict__ part, float beta,
                                                 float* __restrict__ C, int ldc) {
    GRID_STRIDE_T(I, i, mn) {
        float s = 0.f;
        for (int z = 0; z < splits; z++) s += part[(long long)z * (long long)mn + (long long)i];
        const I r = i / N;
        const long long o = (long long)r * ldc + (long long)(i - r * N);
        if (beta != 0.f) s += beta * C[o];
        C[o] = s;
    }
}

// gemm_reduce sets C = beta*C + sum over the splits of part (in split
// order); beta == 0 ignores C's old contents.
extern "C" __global__ void gemm_reduce(int M, int N, int splits, const float* __restrict__ part, float beta,
                                       float* __restrict__ C, int ldc) {
    const long long mn = (long long)M * N;
    if (index32(mn))
        gemm_reduce_loop<unsigned>((unsigned)mn, (unsigned)N, splits, part, beta, C, ldc);
    else
        gemm_reduce_loop<long long>(mn, (long long)N, splits, part, beta, C, ldc);
}

// gemm_beta sets C *= beta over n elements (C = beta*C when the product is
// empty or alpha is 0); beta == 0 writes zeros, NaNs included.
extern "C" __global__ void gemm_beta(long long n, float beta, float* __restrict__ C) {
    GRID_STRIDE(i, n) { C[i] = beta == 0.f ? 0.f : beta * C[i]; }
}
