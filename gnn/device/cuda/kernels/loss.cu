// Softmax cross-entropy and argmax, one warp per row. The maximum is the
// first one (smallest column on ties, NaNs never win), as in the CPU
// backend; the log-sum-exp is taken in double.
#include "common.cuh"

// warp_argmax reduces (value, column) pairs to the largest value, the
// smallest column on ties, and broadcasts it to every lane.
__device__ __forceinline__ void warp_argmax(float& v, int& a) {
#pragma unroll
    for (int off = WARP / 2; off > 0; off /= 2) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, off);
        const int oa = __shfl_xor_sync(0xffffffffu, a, off);
        if (ov > v || (ov == v && oa < a)) {
            v = ov;
            a = oa;
        }
    }
}

__device__ __forceinline__ double warp_sum(double s) {
#pragma unroll
    for (int off = WARP / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    return s;
}

// row_argmax scans a row: each lane its columns lane, lane+32, ..., starting
// from (-inf, its first column) so that a row of -inf and NaN yields 0.
__device__ __forceinline__ void row_argmax(const float* x, int cols, float& mx, int& arg) {
    const int lane = lane_id();
    mx = -__int_as_float(0x7f800000);
    arg = lane < cols ? lane : 0x7fffffff;
    for (int j = lane; j < cols; j += WARP) {
        const float v = x[j];
        if (v > mx) {
            mx = v;
            arg = j;
        }
    }
    warp_argmax(mx, arg);
}

// softmax_ce writes, for every row with a label in [0, cols), the row's
// negative log-likelihood (row_loss, double) and whether its argmax is the
// label (row_ok), and, when grad is given, the gradient of the mean loss
// (softmax - onehot) * inv. Rows labelled -1 get zeros everywhere.
extern "C" __global__ void softmax_ce(const float* __restrict__ logits, const int* __restrict__ labels,
                                      float* __restrict__ grad, double* __restrict__ row_loss,
                                      int* __restrict__ row_ok, int rows, int cols, double inv) {
    const int lane = lane_id();
    for (long long r = warp_id(); r < rows; r += warp_count()) {
        const float* x = logits + r * cols;
        float* g = grad != nullptr ? grad + r * cols : nullptr;
        const int lab = labels[r];
        if (lab < 0) {
            if (g != nullptr)
                for (int j = lane; j < cols; j += WARP) g[j] = 0.f;
            if (lane == 0) {
                row_loss[r] = 0.0;
                row_ok[r] = 0;
            }
            continue;
        }
        float mx;
        int arg;
        row_argmax(x, cols, mx, arg);
        const double m = (double)mx;
        double s = 0.0;
        for (int j = lane; j < cols; j += WARP) s += exp((double)x[j] - m);
        s = warp_sum(s);
        const double lse = m + log(s);
        if (g != nullptr) {
            for (int j = lane; j < cols; j += WARP) {
                const double p = exp((double)x[j] - lse);
                g[j] = (float)(j == lab ? (p - 1.0) * inv : p * inv);
            }
        }
        if (lane == 0) {
            row_loss[r] = lse - (double)x[lab];
            row_ok[r] = arg == lab ? 1 : 0;
        }
    }
}

// argmax writes each row's first largest column into out.
extern "C" __global__ void argmax(int* __restrict__ out, const float* __restrict__ x, int rows, int cols) {
    for (long long r = warp_id(); r < rows; r += warp_count()) {
        float mx;
        int arg;
        row_argmax(x + r * cols, cols, mx, arg);
        if (lane_id() == 0) out[r] = arg;
    }
}
