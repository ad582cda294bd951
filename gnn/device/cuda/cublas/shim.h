// Prototypes of the cuBLAS wrappers in shim.c. cuBLAS's own header is not
// needed: the few types and entry points are declared here as the cuBLAS
// API (v2, stable since CUDA 6) defines them.
#ifndef GNNSCOPE_CUBLAS_SHIM_H
#define GNNSCOPE_CUBLAS_SHIM_H

typedef void *gs_blas_handle;

const char *gsb_load(const char *lib);
int gsb_loaded(void);
int gsb_create(gs_blas_handle *h);
int gsb_destroy(gs_blas_handle h);
int gsb_set_stream(gs_blas_handle h, void *stream);
int gsb_version(gs_blas_handle h, int *v);
int gsb_sgemm(gs_blas_handle h, int transa, int transb, int m, int n, int k,
	float alpha, unsigned long long a, int lda, unsigned long long b, int ldb,
	float beta, unsigned long long c, int ldc);

#endif
