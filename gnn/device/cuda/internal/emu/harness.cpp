// Runs gnnscope's CUDA kernels under emu.h on the CPU and compares them
// with plain reference loops. Build and run with run.sh (g++ 12, C++20).
// Given two file names, it also generates the dropout masks of the cases
// listed in the first (written by the Go test: one line per mask with its
// element count, seed, threshold, keep value as float32 bits and grid size)
// and writes them, as float32 values in that order, to the second, for the
// Go side to compare with the CPU backend's. Given two more, it runs the
// neighbor sampling kernel on the cases listed in the third and writes its
// draws to the fourth (see dump_samples in sampling.h).
#include "emu.h"

#include "../../kernels/elementwise.cu"
#include "../../kernels/gemm.cu"
#include "../../kernels/loss.cu"
#include "../../kernels/sample.cu"
#include "../../kernels/sparse.cu"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

static int failures = 0;
static std::mt19937_64 gen(1);

static float urand() { return std::uniform_real_distribution<float>(-1, 1)(gen); }
static std::vector<float> rvec(size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = urand();
    return v;
}

static void expect(bool ok, const std::string& what) {
    if (!ok) {
        failures++;
        std::fprintf(stderr, "FAIL %s\n", what.c_str());
    }
}

static bool close(double got, double want, double scale) {
    return std::fabs(got - want) <= 1e-4 * (std::fabs(want) + scale) || (std::isnan(got) && std::isnan(want));
}

static void check_vec(const std::vector<float>& got, const std::vector<double>& want, double scale, const std::string& what) {
    for (size_t i = 0; i < got.size(); i++)
        if (!close(got[i], want[i], scale)) {
            expect(false, what + ": element " + std::to_string(i) + " = " + std::to_string(got[i]) + ", want " + std::to_string(want[i]));
            return;
        }
}

static dim3 g1(unsigned x, unsigned y = 1, unsigned z = 1) { return dim3{x, y, z}; }

static void test_gemm() {
    int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {65, 70, 33}, {64, 64, 16}, {20, 130, 40}};
    for (auto& s : shapes)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int split = 0; split < 2; split++) {
                    int M = s[0], N = s[1], K = s[2];
                    float alpha = 0.75f, beta = split ? 0.f : 0.5f;
                    auto A = rvec((size_t)M * K), B = rvec((size_t)K * N), C = rvec((size_t)M * N);
                    int lda = ta ? M : K, ldb = tb ? K : N;
                    std::vector<double> want(M * N);
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            double acc = 0;
                            for (int k = 0; k < K; k++) {
                                double a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                                double b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                                acc += a * b;
                            }
                            want[i * N + j] = alpha * acc + (beta != 0 ? beta * C[i * N + j] : 0);
                        }
                    auto fn = ta ? (tb ? gemm_tt : gemm_tn) : (tb ? gemm_nt : gemm_nn);
                    dim3 grid = g1((N + 63) / 64, (M + 63) / 64);
                    std::string what = "gemm " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                                       " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " split=" + std::to_string(split);
                    if (!split) {
                        launch(fn, grid, 256, M, N, K, alpha, (const float*)A.data(), lda, (const float*)B.data(), ldb, beta,
                               C.data(), N, (float*)nullptr, 0);
                    } else {
                        int kchunk = 16, splits = (K + kchunk - 1) / kchunk;
                        std::vector<float> part((size_t)splits * M * N, NAN);
                        grid.z = splits;
                        launch(fn, grid, 256, M, N, K, alpha, (const float*)A.data(), lda, (const float*)B.data(), ldb, beta,
                               C.data(), N, part.data(), kchunk);
                        launch(gemm_reduce, g1(2), 256, M, N, splits, (const float*)part.data(), beta, C.data(), N);
                    }
                    check_vec(C, want, K * alpha + 1, what);
                }
    // gemm_beta with beta 0 clears NaNs.
    std::vector<float> c(300, NAN);
    launch(gemm_beta, g1(1), 256, (long long)c.size(), 0.f, c.data());
    expect(std::all_of(c.begin(), c.end(), [](float v) { return v == 0; }), "gemm_beta 0");
}

struct csr {
    int rows, cols;
    std::vector<long long> indptr;
    std::vector<int> idx;
    std::vector<float> w;
};

static csr rand_csr(int rows, int cols) {
    csr b{rows, cols, {0}, {}, {}};
    for (int i = 0; i < rows; i++) {
        int deg = gen() % 4 == 0 ? 0 : 1 + gen() % 20;
        for (int k = 0; k < deg; k++) {
            b.idx.push_back(gen() % cols);
            b.w.push_back(urand());
        }
        b.indptr.push_back(b.idx.size());
    }
    return b;
}

static void test_spmm() {
    for (int C : {1, 33, 130, 300}) {
        csr b = rand_csr(70, 90);
        // the original block of a transpose, for scale_indptr (90 rows)
        csr o = rand_csr(90, 5);
        auto x = rvec((size_t)b.cols * C);
        for (int mode = 0; mode < 4; mode++) {  // sum, mean, weighted, scaled
            std::vector<float> out((size_t)b.rows * C, NAN);
            const float* w = mode == 2 ? b.w.data() : nullptr;
            const long long* sc = mode == 3 ? o.indptr.data() : nullptr;
            launch(spmm, g1(3), 256, out.data(), (const long long*)b.indptr.data(), (const int*)b.idx.data(), w, sc,
                   (const float*)x.data(), b.rows, C, mode == 1 ? 1 : 0);
            std::vector<double> want((size_t)b.rows * C, 0);
            for (int r = 0; r < b.rows; r++) {
                long long deg = b.indptr[r + 1] - b.indptr[r];
                for (long long e = b.indptr[r]; e < b.indptr[r + 1]; e++) {
                    int s = b.idx[e];
                    double coef = 1;
                    if (mode == 2) coef = b.w[e];
                    if (mode == 3) {
                        long long d = o.indptr[s + 1] - o.indptr[s];
                        coef = d > 0 ? 1.0 / d : 0;
                    }
                    for (int c = 0; c < C; c++) want[(size_t)r * C + c] += coef * x[(size_t)s * C + c];
                }
                if (mode == 1 && deg > 0)
                    for (int c = 0; c < C; c++) want[(size_t)r * C + c] /= deg;
            }
            check_vec(out, want, 20, "spmm mode " + std::to_string(mode) + " cols " + std::to_string(C));
        }
    }
}

static void test_gather_scatter() {
    int n = 300, C = 37, rows = 50;
    auto src = rvec((size_t)rows * C);
    std::vector<int> idx(n);
    for (auto& i : idx) i = gen() % rows;
    std::vector<float> dst((size_t)n * C);
    launch(gather, g1(2), 256, dst.data(), (const float*)src.data(), (const int*)idx.data(), n, C);
    bool ok = true;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++) ok &= dst[(size_t)i * C + c] == src[(size_t)idx[i] * C + c];
    expect(ok, "gather");
    // scatter_rows with distinct targets
    std::vector<int> perm(rows);
    for (int i = 0; i < rows; i++) perm[i] = (i * 7) % rows;
    std::vector<float> out((size_t)rows * C, 0);
    launch(scatter_rows, g1(2), 256, out.data(), (const float*)src.data(), (const int*)perm.data(), rows, C);
    ok = true;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < C; c++) ok &= out[(size_t)perm[i] * C + c] == src[(size_t)i * C + c];
    expect(ok, "scatter_rows");
    // scatter_add_seg: group idx by target, index order within a group
    std::vector<int> target, segptr, order;
    for (int t = 0; t < rows; t++) {
        bool any = false;
        for (int i = 0; i < n; i++)
            if (idx[i] == t) {
                if (!any) {
                    target.push_back(t);
                    segptr.push_back(order.size());
                    any = true;
                }
                order.push_back(i);
            }
    }
    segptr.push_back(order.size());
    auto acc = rvec((size_t)rows * C);
    std::vector<float> want(acc);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++) want[(size_t)idx[i] * C + c] += dst[(size_t)i * C + c];
    launch(scatter_add_seg, g1(2), 256, acc.data(), (const float*)dst.data(), (const int*)target.data(),
           (const int*)segptr.data(), (const int*)order.data(), (int)target.size(), C);
    expect(acc == want, "scatter_add_seg (bit-identical to sequential adds in index order)");
}

static void test_elementwise() {
    int rows = 600, C = 45;
    long long n = (long long)rows * C;
    auto x = rvec(n), b = rvec(C);
    auto want = x;
    for (long long i = 0; i < n; i++) want[i] += b[i % C];
    launch(add_bias, g1(3), 256, x.data(), (const float*)b.data(), n, C);
    expect(x == want, "add_bias");
    int chunks = (rows + 255) / 256;
    std::vector<double> part((size_t)chunks * C);
    std::vector<float> db(C);
    launch(sum_rows_partial, g1(1, 2), 256, part.data(), (const float*)x.data(), rows, C);
    launch(sum_rows_final, g1(1), 256, db.data(), (const double*)part.data(), chunks, C);
    bool ok = true;
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int ch = 0; ch < chunks; ch++) {
            double p = 0;
            for (int r = ch * 256; r < std::min(rows, (ch + 1) * 256); r++) p += x[(size_t)r * C + c];
            s += p;
        }
        ok &= db[c] == (float)s;
    }
    expect(ok, "sum_rows (chunked double sums)");
    std::vector<float> sp = {0.f, -0.f, NAN, -NAN, INFINITY, -INFINITY, -1e-38f, 1e-38f, 2.f, -3.f};
    std::vector<float> y(sp.size()), dy = rvec(sp.size()), dx(sp.size());
    launch(relu, g1(1), 256, y.data(), (const float*)sp.data(), (long long)sp.size());
    launch(relu_backward, g1(1), 256, dx.data(), (const float*)dy.data(), (const float*)sp.data(), (long long)sp.size());
    for (size_t i = 0; i < sp.size(); i++) {
        unsigned bits = __float_as_uint(sp[i]);
        float wy = (bits >> 31) ? 0.f : sp[i];
        expect(__float_as_uint(y[i]) == __float_as_uint(wy), "relu " + std::to_string(i));
        bool keep = !(bits >> 31) && bits != 0;
        expect(dx[i] == (keep ? dy[i] : 0.f), "relu_backward " + std::to_string(i));
    }
    auto a = rvec(n), c = rvec(n), o = rvec(n);
    launch(mul, g1(2), 256, o.data(), (const float*)a.data(), (const float*)c.data(), n);
    ok = true;
    for (long long i = 0; i < n; i++) ok &= o[i] == a[i] * c[i];
    expect(ok, "mul");
    launch(axpy, g1(2), 256, 0.5f, (const float*)a.data(), o.data(), n);
    launch(scale, g1(2), 256, 2.f, o.data(), n);
    ok = true;
    for (long long i = 0; i < n; i++) ok &= close(o[i], 2 * (a[i] * c[i] + 0.5 * a[i]), 1);
    expect(ok, "axpy, scale");
    // adam, one step from zero moments
    auto p = rvec(n), g = rvec(n);
    std::vector<float> m(n, 0), v(n, 0), p0(p);
    float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 5e-4f;
    float step_size = lr / (1 - b1), isb = 1 / std::sqrt(1 - b2);
    launch(adam, g1(2), 256, p.data(), (const float*)g.data(), m.data(), v.data(), n, b1, b2, eps, wd, step_size, isb);
    ok = true;
    for (long long i = 0; i < n; i++) {
        double gi = g[i] + wd * p0[i];
        double mi = (1 - b1) * gi, vi = (1 - b2) * gi * gi;
        double want = p0[i] - step_size * mi / (std::sqrt(vi) * isb + eps);
        ok &= close(p[i], want, 1e-2);
    }
    expect(ok, "adam");
}

static void test_loss() {
    for (int C : {1, 5, 47, 100}) {
        int rows = 40;
        auto x = rvec((size_t)rows * C);
        for (auto& v : x) v *= 6;
        if (C >= 5) x[3] = x[4] = 50;  // a tie in row 0
        std::vector<int> labels(rows);
        int counted = 0;
        for (int i = 0; i < rows; i++) {
            labels[i] = i % 9 == 4 ? -1 : gen() % C;
            counted += labels[i] >= 0;
        }
        double inv = 1.0 / counted;
        std::vector<float> grad((size_t)rows * C, NAN);
        std::vector<double> rl(rows);
        std::vector<int> ok(rows), am(rows);
        launch(softmax_ce, g1(2), 256, (const float*)x.data(), (const int*)labels.data(), grad.data(), rl.data(), ok.data(), rows, C,
               inv);
        launch(argmax, g1(1), 256, am.data(), (const float*)x.data(), rows, C);
        for (int r = 0; r < rows; r++) {
            const float* xr = &x[(size_t)r * C];
            float mx = -INFINITY;
            int arg = 0;
            for (int j = 0; j < C; j++)
                if (xr[j] > mx) mx = xr[j], arg = j;
            expect(am[r] == arg, "argmax row " + std::to_string(r));
            int lab = labels[r];
            if (lab < 0) {
                expect(rl[r] == 0 && ok[r] == 0, "softmax ignored row");
                bool z = true;
                for (int j = 0; j < C; j++) z &= grad[(size_t)r * C + j] == 0;
                expect(z, "softmax ignored row gradient");
                continue;
            }
            double s = 0;
            for (int j = 0; j < C; j++) s += std::exp((double)xr[j] - mx);
            double lse = mx + std::log(s);
            expect(std::fabs(rl[r] - (lse - xr[lab])) < 1e-9 * (1 + std::fabs(lse)), "softmax loss row " + std::to_string(r));
            expect(ok[r] == (arg == lab), "softmax correct row " + std::to_string(r));
            for (int j = 0; j < C; j++) {
                double p = std::exp((double)xr[j] - lse);
                double want = (j == lab ? p - 1 : p) * inv;
                expect(close(grad[(size_t)r * C + j], want, inv), "softmax grad row " + std::to_string(r));
            }
        }
    }
}

// test_philox checks philox4x32_10 against the Random123 known-answer
// vectors (counter, key, output).
static void test_philox() {
    const unsigned kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (auto& v : kat) {
        unsigned out[4];
        philox4x32_10(v, v[4], v[5], out);
        expect(out[0] == v[6] && out[1] == v[7] && out[2] == v[8] && out[3] == v[9], "philox4x32_10 known answer");
    }
}

// test_index64 runs the 64-bit index instantiations of the kernels that
// take 32-bit indices where the sizes allow (every size the emulation can
// hold), and checks them against the same references.
static void test_index64() {
    int rows = 70, C = 37;
    long long n = (long long)rows * C;
    auto x = rvec(n), b = rvec(C), want = x;
    for (long long i = 0; i < n; i++) want[i] += b[i % C];
    launch(add_bias_loop<long long>, g1(2), 256, x.data(), (const float*)b.data(), n, (long long)C);
    expect(x == want, "add_bias, 64-bit indices");
    std::vector<int> idx(rows);
    for (int i = 0; i < rows; i++) idx[i] = (i * 11) % rows;
    std::vector<float> g(n), s(n, 0);
    launch(gather_loop<long long>, g1(3), 256, g.data(), (const float*)x.data(), (const int*)idx.data(), n, (long long)C);
    launch(scatter_rows_loop<long long>, g1(3), 256, s.data(), (const float*)x.data(), (const int*)idx.data(), n,
           (long long)C);
    bool okg = true, oks = true;
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < C; c++) {
            okg &= g[(size_t)i * C + c] == x[(size_t)idx[i] * C + c];
            oks &= s[(size_t)idx[i] * C + c] == x[(size_t)i * C + c];
        }
    expect(okg, "gather, 64-bit indices");
    expect(oks, "scatter_rows, 64-bit indices");
    int M = 9, N = 13, ldc = 16, splits = 3;
    auto part = rvec((size_t)splits * M * N);
    auto c32 = rvec((size_t)M * ldc), c64 = c32, ref = c32;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.f;
            for (int z = 0; z < splits; z++) acc += part[((size_t)z * M + i) * N + j];
            ref[(size_t)i * ldc + j] = acc + 0.5f * ref[(size_t)i * ldc + j];
        }
    launch(gemm_reduce, g1(1), 256, M, N, splits, (const float*)part.data(), 0.5f, c32.data(), ldc);
    launch(gemm_reduce_loop<long long>, g1(1), 256, (long long)M * N, (long long)N, splits, (const float*)part.data(), 0.5f,
           c64.data(), ldc);
    expect(c32 == ref, "gemm_reduce with ldc > N");
    expect(c64 == ref, "gemm_reduce with ldc > N, 64-bit indices");
}

#include "sampling.h"

// dump_dropout generates the masks of the cases listed in the file in and
// writes them to the file out.
static void dump_dropout(const char* in, const char* out) {
    FILE* cases = std::fopen(in, "r");
    FILE* f = std::fopen(out, "wb");
    if (!cases || !f) {
        expect(false, std::string("open ") + in + " or " + out);
        if (cases) std::fclose(cases);
        if (f) std::fclose(f);
        return;
    }
    long long n;
    unsigned long long seed;
    unsigned thresh, keep_bits, grid;
    while (std::fscanf(cases, "%lld %llu %u %u %u", &n, &seed, &thresh, &keep_bits, &grid) == 5) {
        std::vector<float> m((size_t)n, NAN);
        launch(dropout_mask, g1(grid), 256, m.data(), n, seed, thresh, __uint_as_float(keep_bits));
        std::fwrite(m.data(), 4, m.size(), f);
    }
    std::fclose(cases);
    std::fclose(f);
}

int main(int argc, char** argv) {
    test_gemm();
    test_spmm();
    test_gather_scatter();
    test_elementwise();
    test_loss();
    test_philox();
    test_index64();
    test_gather_rows_at();
    if (argc > 2) dump_dropout(argv[1], argv[2]);
    if (argc > 4) dump_samples(argv[3], argv[4]);
    if (failures) {
        std::fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    std::printf("all kernels match their references\n");
    return 0;
}
