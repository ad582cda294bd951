// Neighbor sampling on the device (--sampler-device cuda): one hop of the
// GraphSAGE sampler of gnn/sample, drawn by a kernel; the host maps the
// drawn global ids to local ones and builds the block.
#include "common.cuh"

// SAMPLE_TAG is the fourth counter word of the sampler's Philox stream, so
// that its blocks never coincide with dropout's (whose fourth word is 0).
#define SAMPLE_TAG 0x53414d50u

// sample_draw returns the uniform integer in [0, n) that draw m of frontier
// position i takes: word m%4 of the Philox4x32-10 block with counter
// (i, m/4, hop, SAMPLE_TAG) and key (k0, k1), scaled by Lemire's
// multiply-shift (bias below n/2^32). gnn/sample's reference (DrawHop)
// computes the same.
__device__ __forceinline__ unsigned sample_draw(unsigned i, unsigned m, unsigned hop, unsigned k0, unsigned k1,
                                                unsigned n) {
    const unsigned ctr[4] = {i, m >> 2, hop, SAMPLE_TAG};
    unsigned w[4];
    philox4x32_10(ctr, k0, k1, w);
    return (unsigned)(((unsigned long long)w[m & 3] * n) >> 32);
}

// sample_neighbors draws, for frontier node nodes[i] (i < n) of degree d,
// min(d, k) distinct positions of its graph row, uniformly without
// replacement (all of them, in row order, when d <= k; otherwise Floyd's
// algorithm, whose picks are checked by a scan of the row's earlier
// picks), and writes the entries at those positions to out row i
// (n × k) and min(d, k) to count[i]. indptr and indices may be mapped host
// memory (a graph that does not fit the device). One thread per frontier
// node, grid-stride; the result does not depend on the grid.
extern "C" __global__ void sample_neighbors(int* __restrict__ out, int* __restrict__ count,
                                            const long long* __restrict__ indptr, const int* __restrict__ indices,
                                            const int* __restrict__ nodes, int n, int k, unsigned k0, unsigned k1,
                                            unsigned hop) {
    GRID_STRIDE(i, n) {
        const int v = nodes[i];
        const long long a = indptr[v];
        const long long d = indptr[v + 1] - a;
        int* o = out + i * (long long)k;
        if (d <= k) {
            for (int j = 0; j < (int)d; j++) o[j] = indices[a + j];
            count[i] = (int)d;
            continue;
        }
        for (int m = 0; m < k; m++) {
            const unsigned j = (unsigned)(d - k + m);
            int t = (int)sample_draw((unsigned)i, (unsigned)m, hop, k0, k1, j + 1);
            for (int p = 0; p < m; p++)
                if (o[p] == t) {  // already chosen: take j, which cannot be
                    t = (int)j;
                    break;
                }
            o[m] = t;
        }
        for (int m = 0; m < k; m++) o[m] = indices[a + o[m]];
        count[i] = k;
    }
}
