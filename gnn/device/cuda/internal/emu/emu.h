// CPU emulation of the CUDA C subset gnnscope's kernels use, so that their
// logic (indexing, tiling, K splits, warp reductions, the generator) can be
// checked on a machine without a GPU: every block runs on its own set of
// OS threads, one per CUDA thread, __syncthreads is a block barrier and the
// warp shuffles exchange through a per-warp buffer between two barriers.
// It checks what the kernels compute, not how fast, and not the memory
// model of a real GPU.
#pragma once

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static

namespace emu {
inline std::barrier<>* block_barrier;
struct warp_state {
    std::unique_ptr<std::barrier<>> bar;
    uint64_t buf[32];
};
inline std::vector<warp_state>* warps;
}  // namespace emu

inline void __syncthreads() { emu::block_barrier->arrive_and_wait(); }

template <typename T>
inline T shfl_xor(T v, int off) {
    static_assert(sizeof(T) <= 8, "shuffle of a type above 8 bytes");
    auto& w = (*emu::warps)[threadIdx.x / 32];
    int lane = threadIdx.x % 32;
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    w.buf[lane] = bits;
    w.bar->arrive_and_wait();
    uint64_t o = w.buf[lane ^ off];
    w.bar->arrive_and_wait();
    T r;
    std::memcpy(&r, &o, sizeof(T));
    return r;
}
#define __shfl_xor_sync(mask, v, off) shfl_xor((v), (off))

inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
using std::max;
using std::min;
inline long long min(long long a, int b) { return a < b ? a : (long long)b; }
inline long long min(int a, long long b) { return a < b ? (long long)a : b; }

// launch runs kernel over grid × block threads, one block at a time.
template <typename... Args>
void launch(void (*kernel)(Args...), dim3 grid, unsigned threads, Args... args) {
    gridDim = grid;
    blockDim = dim3{threads, 1, 1};
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                std::barrier<> bar(threads);
                std::vector<emu::warp_state> ws((threads + 31) / 32);
                for (auto& w : ws) w.bar = std::make_unique<std::barrier<>>(32);
                emu::block_barrier = &bar;
                emu::warps = &ws;
                std::vector<std::thread> ts;
                ts.reserve(threads);
                for (unsigned t = 0; t < threads; t++)
                    ts.emplace_back([&, t] {
                        threadIdx = dim3{t, 0, 0};
                        blockIdx = dim3{bx, by, bz};
                        kernel(args...);
                    });
                for (auto& th : ts) th.join();
            }
}
