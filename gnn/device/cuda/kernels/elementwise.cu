// Elementwise kernels, column sums, dropout masks and the Adam step. Each
// reproduces the CPU backend's arithmetic: Relu and ReluBackward decide on
// sign bits as it does, SumRows sums fixed chunks of 256 rows in double and
// adds the chunks in order (bit-identical to the CPU), and dropout_mask
// runs the same xoshiro256** generators over the same 64-row chunks, so the
// masks are identical.
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

// The engine's generator (gnn/rng): splitmix64 seeding and xoshiro256**.
__device__ __forceinline__ unsigned long long splitmix(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// mix2 is rng.Mix(a, b).
__device__ __forceinline__ unsigned long long mix2(unsigned long long a, unsigned long long b) {
    unsigned long long h = 0x9e3779b97f4a7c15ULL;
    h ^= a + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = splitmix(h);
    h ^= b + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = splitmix(h);
    return h;
}

__device__ __forceinline__ unsigned long long rotl(unsigned long long x, int k) { return (x << k) | (x >> (64 - k)); }

struct xoshiro {
    unsigned long long s0, s1, s2, s3;
    __device__ void seed(unsigned long long s) {
        s0 = splitmix(s);
        s1 = splitmix(s0 ^ 0x6a09e667f3bcc909ULL);
        s2 = splitmix(s1 ^ 0xbb67ae8584caa73bULL);
        s3 = splitmix(s2 ^ 0x3c6ef372fe94f82bULL);
    }
    __device__ unsigned long long next() {
        const unsigned long long result = rotl(s1 * 5, 7) * 9;
        const unsigned long long t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = rotl(s3, 45);
        return result;
    }
};

#define DROPOUT_CHUNK_ROWS 64

// dropout_mask fills mask (rows × cols) with 0 or keep: one thread per chunk
// of 64 rows draws from the generator seeded with rng.Mix(seed, chunk), two
// 24-bit uniforms per 64-bit word, and drops an element when its uniform is
// below thresh (p scaled to 2^24 and rounded up, computed by the host).
extern "C" __global__ void dropout_mask(float* __restrict__ mask, int rows, int cols, unsigned long long seed,
                                        unsigned thresh, float keep) {
    const int chunks = (rows + DROPOUT_CHUNK_ROWS - 1) / DROPOUT_CHUNK_ROWS;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += gridDim.x * blockDim.x) {
        xoshiro r;
        r.seed(mix2(seed, (unsigned long long)c));
        const long long lo = (long long)c * DROPOUT_CHUNK_ROWS * cols;
        const long long hi = (long long)min((c + 1) * DROPOUT_CHUNK_ROWS, rows) * cols;
        float* m = mask + lo;
        const long long len = hi - lo;
        long long i = 0;
        for (; i + 2 <= len; i += 2) {
            const unsigned long long u = r.next();
            const unsigned a = (unsigned)(u >> 40), b = (unsigned)(u >> 16) & ((1u << 24) - 1);
            m[i] = ((a - thresh) >> 31) & 1 ? 0.f : keep;
            m[i + 1] = ((b - thresh) >> 31) & 1 ? 0.f : keep;
        }
        if (i < len) {
            const unsigned a = (unsigned)(r.next() >> 40);
            m[i] = ((a - thresh) >> 31) & 1 ? 0.f : keep;
        }
    }
}
