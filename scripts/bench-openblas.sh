#!/bin/sh
# Measures OpenBLAS cblas_sgemm at the GNN shapes that gnn/device/cpu's
# BenchmarkGemm uses (forward X·W, weight gradient Xᵀ·dY, input gradient
# dY·Wᵀ), with 1 and 2 threads, and prints median GFLOP/s per shape.
#
# Needs gcc and OpenBLAS (Debian: apt-get install -y libopenblas-dev).
# Usage: scripts/bench-openblas.sh [reps]   (default 5 timed runs per shape)
#
# OpenBLAS picks its kernels from the CPU model; a build older than the CPU
# falls back to Haswell (AVX2). OPENBLAS_CORETYPE=SkylakeX forces its
# AVX-512 kernels on CPUs that have AVX-512 (the environment is passed on).
set -eu

reps=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/bench.c" <<'C'
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clk(clockid_t id) {
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void) { return clk(CLOCK_MONOTONIC); }
static double cpu(void) { return clk(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* C (m×n) = op(A)·op(B), op(A) m×k, op(B) k×n, all row-major. */
static void bench(const char *name, int ta, int tb, int m, int k, int n, int reps) {
	float *a = malloc(sizeof(float) * (size_t)m * k);
	float *b = malloc(sizeof(float) * (size_t)k * n);
	float *c = malloc(sizeof(float) * (size_t)m * n);
	for (size_t i = 0; i < (size_t)m * k; i++) a[i] = (float)rand() / RAND_MAX - 0.5f;
	for (size_t i = 0; i < (size_t)k * n; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
	int lda = ta ? m : k, ldb = tb ? k : n;
	enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
	double t[64], ct[64];
	if (reps > 64) reps = 64;
	cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1, a, lda, b, ldb, 0, c, n); /* warm up */
	/* Each timed sample repeats small products so it lasts >= 50 ms. */
	int inner = 1;
	double t0 = now();
	cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1, a, lda, b, ldb, 0, c, n);
	double one = now() - t0;
	if (one < 0.05) inner = (int)(0.05 / (one > 1e-7 ? one : 1e-7)) + 1;
	for (int r = 0; r < reps; r++) {
		double c0 = cpu();
		t0 = now();
		for (int i = 0; i < inner; i++)
			cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1, a, lda, b, ldb, 0, c, n);
		t[r] = (now() - t0) / inner;
		ct[r] = (cpu() - c0) / inner;
	}
	qsort(t, reps, sizeof t[0], cmp);
	qsort(ct, reps, sizeof ct[0], cmp);
	double med = t[reps / 2], cmed = ct[reps / 2];
	int threads = openblas_get_num_threads();
	double flop = 2.0 * m * n * k;
	double gf = flop / med / 1e9;
	/* GFLOP per CPU-second: on a loaded machine, the per-core rate of an
	   unloaded one (idle OpenBLAS threads spin, which lowers it with 2). */
	printf("openblas %-18s threads=%d  %10.3f ms/op  %7.1f GFLOP/s  %7.1f GFLOP/s/core  %7.1f GFLOP/cpu-s\n",
	       name, threads, med * 1e3, gf, gf / threads, flop / cmed / 1e9);
	free(a);
	free(b);
	free(c);
}

int main(int argc, char **argv) {
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	if (reps < 1) reps = 1;
	printf("# %s\n", openblas_get_config());
	bench("fwd_100kx256x256", 0, 0, 100000, 256, 256, reps);
	bench("dW_256x100kx256", 1, 0, 256, 100000, 256, reps);
	bench("dX_100kx256x256", 0, 1, 100000, 256, 256, reps);
	bench("fwd_1024x100x256", 0, 0, 1024, 100, 256, reps);
	bench("dW_100x1024x256", 1, 0, 100, 1024, 256, reps);
	return 0;
}
C

gcc -O2 -o "$tmp/bench" "$tmp/bench.c" -lopenblas
for t in 1 2; do
	OPENBLAS_NUM_THREADS=$t "$tmp/bench" "$reps"
done
