//go:build cuda

// The driver's entry points, looked up at run time (see doc.go).

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "shim.h"

// X(name) lists each entry point once: the table's field holds a pointer of
// the prototype cuda.h gives the name, and the symbol looked up is the one
// cuda.h binds the name to (cuMemAlloc is looked up as cuMemAlloc_v2, as a
// program linked against libcuda would bind it).
#define GS_FUNCS(X) \
	X(cuInit) \
	X(cuDriverGetVersion) \
	X(cuGetErrorName) \
	X(cuGetErrorString) \
	X(cuDeviceGetCount) \
	X(cuDeviceGet) \
	X(cuDeviceGetName) \
	X(cuDeviceTotalMem) \
	X(cuDeviceGetAttribute) \
	X(cuDeviceGetUuid) \
	X(cuDevicePrimaryCtxRetain) \
	X(cuDevicePrimaryCtxRelease) \
	X(cuCtxSetCurrent) \
	X(cuCtxSynchronize) \
	X(cuMemAlloc) \
	X(cuMemFree) \
	X(cuMemGetInfo) \
	X(cuMemHostAlloc) \
	X(cuMemFreeHost) \
	X(cuMemHostGetDevicePointer) \
	X(cuMemcpyHtoDAsync) \
	X(cuMemcpyDtoHAsync) \
	X(cuMemcpyDtoDAsync) \
	X(cuMemsetD32Async) \
	X(cuStreamCreate) \
	X(cuStreamDestroy) \
	X(cuStreamSynchronize) \
	X(cuStreamWaitEvent) \
	X(cuEventCreate) \
	X(cuEventDestroy) \
	X(cuEventRecord) \
	X(cuEventQuery) \
	X(cuEventSynchronize) \
	X(cuEventElapsedTime) \
	X(cuModuleLoadDataEx) \
	X(cuModuleUnload) \
	X(cuModuleGetFunction) \
	X(cuLaunchKernel)

#define GS_STR2(x) #x
#define GS_STR(x) GS_STR2(x)

#define GS_FIELD(name) __typeof__(&name) name;
struct gs_table { GS_FUNCS(GS_FIELD) };
#undef GS_FIELD
static struct gs_table gs;

// gs_load opens lib and fills the table. It returns 0, or a message: the
// loader's error text, or "missing SYMBOL" for an entry point not found
// (the table is then left as it was).
const char *gs_load(const char *lib) {
	static char missing[128];
	struct gs_table t;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
#define GS_LOOKUP(name) \
	t.name = (__typeof__(t.name))dlsym(h, GS_STR(name)); \
	if (!t.name) { snprintf(missing, sizeof missing, "missing %s", GS_STR(name)); dlclose(h); return missing; }
	GS_FUNCS(GS_LOOKUP)
#undef GS_LOOKUP
	gs = t;
	return 0;
}

#define GS_CALL(name, ...) (gs.name ? gs.name(__VA_ARGS__) : CUDA_ERROR_NOT_INITIALIZED)

const char *gs_error_name(CUresult r) {
	const char *s = 0;
	if (!gs.cuGetErrorName || gs.cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "unknown CUDA error";
	return s;
}

const char *gs_error_string(CUresult r) {
	const char *s = 0;
	if (!gs.cuGetErrorString || gs.cuGetErrorString(r, &s) != CUDA_SUCCESS || !s) return "";
	return s;
}

// gs_module_load JIT-compiles PTX, writing the compiler's error log into log.
CUresult gs_module_load(CUmodule *m, const char *ptx, char *log, unsigned int logSize) {
	CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(size_t)logSize};
	return GS_CALL(cuModuleLoadDataEx, m, ptx, 2, opts, vals);
}

// gs_launch launches f with n parameters; parameter i is read from vals[i]
// (its low bytes, little-endian, as many as the kernel's parameter has).
CUresult gs_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, CUstream s, unsigned long long *vals, int n) {
	void *params[32];
	if (n < 0 || n > 32) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) params[i] = &vals[i];
	return GS_CALL(cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shared, s, params, 0);
}

CUresult gs_init(void) { return GS_CALL(cuInit, 0); }
CUresult gs_driver_version(int *v) { return GS_CALL(cuDriverGetVersion, v); }
CUresult gs_device_count(int *n) { return GS_CALL(cuDeviceGetCount, n); }
CUresult gs_device_get(CUdevice *d, int ordinal) { return GS_CALL(cuDeviceGet, d, ordinal); }
CUresult gs_device_name(char *name, int len, CUdevice d) { return GS_CALL(cuDeviceGetName, name, len, d); }
CUresult gs_device_total_mem(size_t *bytes, CUdevice d) { return GS_CALL(cuDeviceTotalMem, bytes, d); }
CUresult gs_device_attribute(int *v, CUdevice_attribute a, CUdevice d) { return GS_CALL(cuDeviceGetAttribute, v, a, d); }
CUresult gs_device_uuid(CUuuid *u, CUdevice d) { return GS_CALL(cuDeviceGetUuid, u, d); }
CUresult gs_primary_ctx_retain(CUcontext *c, CUdevice d) { return GS_CALL(cuDevicePrimaryCtxRetain, c, d); }
CUresult gs_primary_ctx_release(CUdevice d) { return GS_CALL(cuDevicePrimaryCtxRelease, d); }
CUresult gs_ctx_set_current(CUcontext c) { return GS_CALL(cuCtxSetCurrent, c); }
CUresult gs_ctx_synchronize(void) { return gs.cuCtxSynchronize ? gs.cuCtxSynchronize() : CUDA_ERROR_NOT_INITIALIZED; }
CUresult gs_mem_alloc(CUdeviceptr *p, size_t n) { return GS_CALL(cuMemAlloc, p, n); }
CUresult gs_mem_free(CUdeviceptr p) { return GS_CALL(cuMemFree, p); }
CUresult gs_mem_get_info(size_t *free, size_t *total) { return GS_CALL(cuMemGetInfo, free, total); }
CUresult gs_mem_host_alloc_mapped(void **p, size_t n) { return GS_CALL(cuMemHostAlloc, p, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP); }
CUresult gs_mem_free_host(void *p) { return GS_CALL(cuMemFreeHost, p); }
CUresult gs_mem_host_device_pointer(CUdeviceptr *d, void *p) { return GS_CALL(cuMemHostGetDevicePointer, d, p, 0); }
CUresult gs_memcpy_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return GS_CALL(cuMemcpyHtoDAsync, dst, src, n, s); }
CUresult gs_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s) { return GS_CALL(cuMemcpyDtoHAsync, dst, src, n, s); }
CUresult gs_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return GS_CALL(cuMemcpyDtoDAsync, dst, src, n, s); }
CUresult gs_memset_d32_async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return GS_CALL(cuMemsetD32Async, p, v, n, s); }
CUresult gs_stream_create(CUstream *s, unsigned int flags) { return GS_CALL(cuStreamCreate, s, flags); }
CUresult gs_stream_destroy(CUstream s) { return GS_CALL(cuStreamDestroy, s); }
CUresult gs_stream_synchronize(CUstream s) { return GS_CALL(cuStreamSynchronize, s); }
CUresult gs_stream_wait_event(CUstream s, CUevent e) { return GS_CALL(cuStreamWaitEvent, s, e, 0); }
CUresult gs_event_create(CUevent *e, unsigned int flags) { return GS_CALL(cuEventCreate, e, flags); }
CUresult gs_event_destroy(CUevent e) { return GS_CALL(cuEventDestroy, e); }
CUresult gs_event_record(CUevent e, CUstream s) { return GS_CALL(cuEventRecord, e, s); }
CUresult gs_event_query(CUevent e) { return GS_CALL(cuEventQuery, e); }
CUresult gs_event_synchronize(CUevent e) { return GS_CALL(cuEventSynchronize, e); }
CUresult gs_event_elapsed(float *ms, CUevent from, CUevent to) { return GS_CALL(cuEventElapsedTime, ms, from, to); }
CUresult gs_module_unload(CUmodule m) { return GS_CALL(cuModuleUnload, m); }
CUresult gs_module_function(CUfunction *f, CUmodule m, const char *name) { return GS_CALL(cuModuleGetFunction, f, m, name); }

int gs_loaded(void) { return gs.cuInit != 0; }
