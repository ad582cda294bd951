// Aggregation over CSR blocks, row gathers and scatters.
//
// spmm: one warp per destination row. The warp walks the row's edges in
// order and every lane accumulates four columns (lane, lane+32, lane+64,
// lane+96) of the chunk of 128 columns it is on, so each source row is read
// with coalesced 128-byte transactions and every output element is summed
// in edge order, as the CPU backend does.
#include "common.cuh"

#define SPMM_COLS (4 * WARP)

// spmm sets out row i (rows × cols) to sum_e coef(e) * x[idx[e]] over the
// edges e in [indptr[i], indptr[i+1]) and divides by the row's length when
// mean != 0 (an empty row is zero). coef(e) is w[e] when w is given, else
// 1/deg(idx[e]) when scale_indptr is given (deg from scale_indptr: the
// adjoint of a mean over the transposed block), else 1.
extern "C" __global__ void spmm(float* __restrict__ out, const long long* __restrict__ indptr,
                                const int* __restrict__ idx, const float* __restrict__ w,
                                const long long* __restrict__ scale_indptr, const float* __restrict__ x, int rows,
                                int cols, int mean) {
    const int lane = lane_id();
    for (long long r = warp_id(); r < rows; r += warp_count()) {
        const long long b = indptr[r], e = indptr[r + 1];
        float inv = 1.f;
        if (mean && e > b) inv = 1.f / (float)(e - b);
        for (int c0 = 0; c0 < cols; c0 += SPMM_COLS) {
            float acc[4] = {0.f, 0.f, 0.f, 0.f};
            for (long long k = b; k < e; k++) {
                const int s = idx[k];
                float coef = 1.f;
                if (w != nullptr) {
                    coef = w[k];
                } else if (scale_indptr != nullptr) {
                    const long long d = scale_indptr[s + 1] - scale_indptr[s];
                    coef = d > 0 ? 1.f / (float)d : 0.f;
                }
                const float* xs = x + (long long)s * cols;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const int c = c0 + lane + WARP * j;
                    if (c < cols) acc[j] += coef * xs[c];
                }
            }
            float* o = out + r * cols;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = c0 + lane + WARP * j;
                if (c < cols) o[c] = mean ? acc[j] * inv : acc[j];
            }
        }
    }
}

// gather_loop and scatter_rows_loop are gather and scatter_rows with
// element indices of type I (32-bit where index32 allows: the division by
// cols is the costliest operation of the loop).
template <typename I>
__device__ __forceinline__ void gather_loop(float* __restrict__ dst, const float* __restrict__ src,
                                            const int* __restrict__ idx, I total, I cols) {
    GRID_STRIDE_T(I, t, total) {
        const I i = t / cols;
        const I c = t - i * cols;
        dst[t] = src[(long long)idx[i] * (long long)cols + (long long)c];
    }
}
template <typename I>
__device__ __forceinline__ void scatter_rows_loop(float* __restrict__ dst, const float* __restrict__ src,
                                                  const int* __restrict__ idx, I total, I cols) {
    GRID_STRIDE_T(I, t, total) {
        const I i = t / cols;
        const I c = t - i * cols;
        dst[(long long)idx[i] * (long long)cols + (long long)c] = src[t];
    }
}

// gather sets dst row i (n × cols) to src row idx[i]. src may be mapped
// host memory (a pull from a pinned history).
extern "C" __global__ void gather(float* __restrict__ dst, const float* __restrict__ src, const int* __restrict__ idx,
                                  int n, int cols) {
    const long long total = (long long)n * cols;
    if (index32(total))
        gather_loop<unsigned>(dst, src, idx, (unsigned)total, (unsigned)cols);
    else
        gather_loop<long long>(dst, src, idx, total, (long long)cols);
}

// scatter_rows sets dst row idx[i] to src row i (idx distinct). dst may be
// mapped host memory (a push into a pinned history).
extern "C" __global__ void scatter_rows(float* __restrict__ dst, const float* __restrict__ src,
                                        const int* __restrict__ idx, int n, int cols) {
    const long long total = (long long)n * cols;
    if (index32(total))
        scatter_rows_loop<unsigned>(dst, src, idx, (unsigned)total, (unsigned)cols);
    else
        scatter_rows_loop<long long>(dst, src, idx, total, (long long)cols);
}

// gather_rows_at_loop is gather_rows_at with element indices of type I.
template <typename I>
__device__ __forceinline__ void gather_rows_at_loop(float* __restrict__ dst, const int* __restrict__ pos,
                                                    const float* __restrict__ src, const int* __restrict__ idx, I total,
                                                    I cols) {
    GRID_STRIDE_T(I, t, total) {
        const I i = t / cols;
        const I c = t - i * cols;
        dst[(long long)pos[i] * (long long)cols + (long long)c] = src[(long long)idx[i] * (long long)cols + (long long)c];
    }
}

// gather_rows_at sets dst row pos[i] to src row idx[i] for i < n (pos
// distinct): a batch's feature cache hits, from the resident rows, or its
// rows of a feature matrix in mapped host memory (UVA).
extern "C" __global__ void gather_rows_at(float* __restrict__ dst, const int* __restrict__ pos,
                                          const float* __restrict__ src, const int* __restrict__ idx, int n, int cols) {
    const long long total = (long long)n * cols;
    if (index32(total))
        gather_rows_at_loop<unsigned>(dst, pos, src, idx, (unsigned)total, (unsigned)cols);
    else
        gather_rows_at_loop<long long>(dst, pos, src, idx, total, (long long)cols);
}

// scatter_add_seg adds rows of src into dst grouped by target: segment s
// adds src rows perm[segptr[s]], ..., perm[segptr[s+1]-1], in that order,
// into dst row target[s]. The host groups the indices of ScatterAdd so that
// every destination row is owned by one warp and receives its additions in
// index order: deterministic, no atomics.
extern "C" __global__ void scatter_add_seg(float* __restrict__ dst, const float* __restrict__ src,
                                           const int* __restrict__ target, const int* __restrict__ segptr,
                                           const int* __restrict__ perm, int nseg, int cols) {
    const int lane = lane_id();
    for (long long s = warp_id(); s < nseg; s += warp_count()) {
        float* o = dst + (long long)target[s] * cols;
        const int b = segptr[s], e = segptr[s + 1];
        for (int c = lane; c < cols; c += WARP) {
            float acc = o[c];
            for (int k = b; k < e; k++) acc += src[(long long)perm[k] * cols + c];
            o[c] = acc;
        }
    }
}
