//go:build cuda

// cuBLAS's entry points, looked up at run time (see doc.go).

#include <dlfcn.h>
#include <stdio.h>
#include "shim.h"

typedef int (*create_fn)(gs_blas_handle *);
typedef int (*destroy_fn)(gs_blas_handle);
typedef int (*set_stream_fn)(gs_blas_handle, void *);
typedef int (*version_fn)(gs_blas_handle, int *);
typedef int (*sgemm_fn)(gs_blas_handle, int, int, int, int, int, const float *,
	const float *, int, const float *, int, const float *, float *, int);

static struct {
	create_fn create;
	destroy_fn destroy;
	set_stream_fn set_stream;
	version_fn version;
	sgemm_fn sgemm;
} t;

// gsb_load opens lib and fills the table; it returns 0 or a message (the
// loader's text, or "missing SYMBOL"), leaving the table as it was.
const char *gsb_load(const char *lib) {
	static char missing[128];
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	create_fn c = (create_fn)dlsym(h, "cublasCreate_v2");
	destroy_fn d = (destroy_fn)dlsym(h, "cublasDestroy_v2");
	set_stream_fn s = (set_stream_fn)dlsym(h, "cublasSetStream_v2");
	version_fn v = (version_fn)dlsym(h, "cublasGetVersion_v2");
	sgemm_fn g = (sgemm_fn)dlsym(h, "cublasSgemm_v2");
	const char *name = !c ? "cublasCreate_v2" : !d ? "cublasDestroy_v2" : !s ? "cublasSetStream_v2"
		: !v ? "cublasGetVersion_v2" : !g ? "cublasSgemm_v2" : 0;
	if (name) {
		snprintf(missing, sizeof missing, "missing %s", name);
		dlclose(h);
		return missing;
	}
	t.create = c; t.destroy = d; t.set_stream = s; t.version = v; t.sgemm = g;
	return 0;
}

int gsb_loaded(void) { return t.sgemm != 0; }

// -1 stands for "not loaded" (cuBLAS's own statuses are >= 0).
int gsb_create(gs_blas_handle *h) { return t.create ? t.create(h) : -1; }
int gsb_destroy(gs_blas_handle h) { return t.destroy ? t.destroy(h) : -1; }
int gsb_set_stream(gs_blas_handle h, void *s) { return t.set_stream ? t.set_stream(h, s) : -1; }
int gsb_version(gs_blas_handle h, int *v) { return t.version ? t.version(h, v) : -1; }

int gsb_sgemm(gs_blas_handle h, int transa, int transb, int m, int n, int k,
	float alpha, unsigned long long a, int lda, unsigned long long b, int ldb,
	float beta, unsigned long long c, int ldc) {
	if (!t.sgemm) return -1;
	return t.sgemm(h, transa, transb, m, n, k, &alpha, (const float *)a, lda,
		(const float *)b, ldb, &beta, (float *)c, ldc);
}
