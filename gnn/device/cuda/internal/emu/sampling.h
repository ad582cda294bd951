// Emulated checks of the row gathers at positions and of the neighbor
// sampling kernel, included by harness.cpp after the kernels.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

// test_gather_rows_at checks gather_rows_at against a reference loop, with
// 32-bit and 64-bit element indices.
static void test_gather_rows_at() {
    int rows = 60, C = 29, n = 45;
    auto src = rvec((size_t)rows * C);
    std::vector<int> pos(n), idx(n);
    for (int i = 0; i < n; i++) {
        pos[i] = (i * 17) % 50;  // distinct positions of a 50-row batch
        idx[i] = gen() % rows;
    }
    for (int wide = 0; wide < 2; wide++) {
        std::vector<float> dst(50 * C, -7.f), want(dst);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < C; c++) want[(size_t)pos[i] * C + c] = src[(size_t)idx[i] * C + c];
        if (wide)
            launch(gather_rows_at_loop<long long>, g1(2), 256, dst.data(), (const int*)pos.data(), (const float*)src.data(),
                   (const int*)idx.data(), (long long)n * C, (long long)C);
        else
            launch(gather_rows_at, g1(2), 256, dst.data(), (const int*)pos.data(), (const float*)src.data(),
                   (const int*)idx.data(), n, C);
        expect(dst == want, wide ? "gather_rows_at, 64-bit indices" : "gather_rows_at");
    }
}

// read_ints reads n integers of type T from f.
template <typename T>
static bool read_ints(FILE* f, std::vector<T>& v, size_t n) {
    v.resize(n);
    for (auto& x : v) {
        long long y;
        if (std::fscanf(f, "%lld", &y) != 1) return false;
        x = (T)y;
    }
    return true;
}

// dump_samples runs sample_neighbors on the cases of the file in (written
// by the Go test: per case a line "N nnz frontier k hop key grid", then the
// graph's N+1 row pointers, its nnz indices and the frontier's nodes) and
// writes, per case, the out rows (frontier × k) and the counts as int32 to
// the file out, for the Go side to compare with the reference draw and to
// test for uniformity. Unused slots of out are written as -1.
static void dump_samples(const char* in, const char* out) {
    FILE* cases = std::fopen(in, "r");
    FILE* f = std::fopen(out, "wb");
    if (!cases || !f) {
        expect(false, std::string("open ") + in + " or " + out);
        if (cases) std::fclose(cases);
        if (f) std::fclose(f);
        return;
    }
    long long N, nnz, nf;
    int k;
    unsigned hop, grid;
    unsigned long long key;
    while (std::fscanf(cases, "%lld %lld %lld %d %u %llu %u", &N, &nnz, &nf, &k, &hop, &key, &grid) == 7) {
        std::vector<long long> indptr;
        std::vector<int> indices, nodes;
        if (!read_ints(cases, indptr, N + 1) || !read_ints(cases, indices, nnz) || !read_ints(cases, nodes, nf)) {
            expect(false, "sample case truncated");
            break;
        }
        std::vector<int> o((size_t)nf * k, -1), count(nf, -1);
        launch(sample_neighbors, g1(grid), 256, o.data(), count.data(), (const long long*)indptr.data(),
               (const int*)indices.data(), (const int*)nodes.data(), (int)nf, k, (unsigned)key, (unsigned)(key >> 32),
               hop);
        std::fwrite(o.data(), 4, o.size(), f);
        std::fwrite(count.data(), 4, count.size(), f);
    }
    std::fclose(cases);
    std::fclose(f);
}
