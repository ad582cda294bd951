// Elementwise kernels, column sums, dropout masks and the Adam step. Each
// reproduces the CPU backend's arithmetic: Relu and ReluBackward decide on
// sign bits as it does, SumRows sums fixed chunks of 256 rows in double and
// adds the chunks in order (bit-identical to the CPU), and dropout_mask
// draws every element from the same Philox4x32-10 stream position as the
// CPU backend, so the masks are identical.
#include "common.cuh"

// add_bias_loop is add_bias with indices of type I (32-bit where index32
// allows: the modulo is the costliest operation of the loop).
template <typename I>
__device__ __forceinline__ void add_bias_loop(float* __restrict__ x, const float* __restrict__ b, I n, I cols) {
    GRID_STRIDE_T(I, i, n) { x[i] += b[i % cols]; }
}

// add_bias adds the row b (cols) to every row of x (n = rows*cols).
extern "C" __global__ void add_bias(float* __restrict__ x, const float* __restrict__ b, long long n, int cols) {
    if (index32(n))
        add_bias_loop<unsigned>(x, b, (unsigned)n, (unsigned)cols);
    else
        add_bias_loop<long long>(x, b, n, (long long)cols);
}

#define SUM_CHUNK_ROWS 256

// sum_rows_partial sets part[ch*cols + c] to the double sum of column c over
// rows [ch*256, min((ch+1)*256, rows)) of dy; grid.y strides over the
// chunks.
extern "C" __global__ void sum_rows_partial(double* __restrict__ part, const float* __restrict__ dy, int rows,
                                            int cols) {
    const int chunks = (rows + SUM_CHUNK_ROWS - 1) / SUM_CHUNK_ROWS;
    for (int ch = blockIdx.y; ch < chunks; ch += gridDim.y) {
        const int lo = ch * SUM_CHUNK_ROWS, hi = min(rows, lo + SUM_CHUNK_ROWS);
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) {
            double s = 0.0;
            for (int r = lo; r < hi; r++) s += (double)dy[(long long)r * cols + c];
            part[(long long)ch * cols + c] = s;
        }
    }
}

// sum_rows_final sets db[c] to the sum of the chunks' partial sums of
// column c, in chunk order.
extern "C" __global__ void sum_rows_final(float* __restrict__ db, const double* __restrict__ part, int chunks,
                                          int cols) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int ch = 0; ch < chunks; ch++) s += part[(long long)ch * cols + c];
        db[c] = (float)s;
    }
}

// relu sets y = x with every value whose sign bit is set replaced by +0
// (so -0 and negative NaNs become 0, positive NaNs stay).
extern "C" __global__ void relu(float* __restrict__ y, const float* __restrict__ x, long long n) {
    GRID_STRIDE(i, n) {
        const unsigned b = __float_as_uint(x[i]);
        y[i] = __uint_as_float(b & ~(unsigned)((int)b >> 31));
    }
}

// relu_backward sets dx = dy where y's sign bit is clear and y is not +0,
// else 0; dx may be dy.
extern "C" __global__ void relu_backward(float* dx, const float* dy, const float* __restrict__ y, long long n) {
    GRID_STRIDE(i, n) {
        const unsigned b = __float_as_uint(y[i]);
        const bool keep = ((int)b >= 0) && b != 0u;
        dx[i] = keep ? dy[i] : 0.f;
    }
}

// mul sets dst = a*b; add sets dst = a+b (dst may alias a or b).
extern "C" __global__ void mul(float* dst, const float* a, const float* b, long long n) {
    GRID_STRIDE(i, n) { dst[i] = a[i] * b[i]; }
}
extern "C" __global__ void add(float* dst, const float* a, const float* b, long long n) {
    GRID_STRIDE(i, n) { dst[i] = a[i] + b[i]; }
}

// axpy sets y += alpha*x; scale sets x *= alpha.
extern "C" __global__ void axpy(float alpha, const float* __restrict__ x, float* __restrict__ y, long long n) {
    GRID_STRIDE(i, n) { y[i] += alpha * x[i]; }
}
extern "C" __global__ void scale(float alpha, float* __restrict__ x, long long n) {
    GRID_STRIDE(i, n) { x[i] *= alpha; }
}

// adam applies one step of torch.optim.Adam with L2 weight decay added to
// the gradient; step_size = lr/(1-beta1^t) and inv_sqrt_bc2 =
// 1/sqrt(1-beta2^t) come from the host, as in the CPU backend.
extern "C" __global__ void adam(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                                float* __restrict__ v, long long n, float beta1, float beta2, float eps, float wd,
                                float step_size, float inv_sqrt_bc2) {
    GRID_STRIDE(i, n) {
        const float gi = g[i] + wd * p[i];
        const float mi = beta1 * m[i] + (1.f - beta1) * gi;
        const float vi = beta2 * v[i] + (1.f - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) * inv_sqrt_bc2 + eps;
        p[i] -= step_size * mi / denom;
    }
}

// dropout_mask fills mask (n elements) with 0 or keep: element i takes word
// i%4 of the Philox4x32-10 block with counter (i/4 low word, i/4 high word,
// 0, 0) and key (seed low word, seed high word), as gnn/rng/philox's stream,
// and is dropped when the word's top 24 bits are below thresh (p scaled to
// 2^24 and rounded up, computed by the host). One thread per block of four
// elements, grid-stride.
extern "C" __global__ void dropout_mask(float* __restrict__ mask, long long n, unsigned long long seed,
                                        unsigned thresh, float keep) {
    const long long blocks = (n + 3) >> 2;
    const unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
    GRID_STRIDE(b, blocks) {
        const unsigned ctr[4] = {(unsigned)b, (unsigned)((unsigned long long)b >> 32), 0u, 0u};
        unsigned w[4];
        philox4x32_10(ctr, k0, k1, w);
        float* m = mask + 4 * b;
        const long long left = n - 4 * b;
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (j < left) m[j] = (((w[j] >> 8) - thresh) >> 31) & 1 ? 0.f : keep;
    }
}
