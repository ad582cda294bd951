// Prototypes of the wrappers in shim.c: each calls one driver entry point
// through the table that gs_load fills, or returns
// CUDA_ERROR_NOT_INITIALIZED when the table is empty.
#ifndef GNNSCOPE_CUDRV_SHIM_H
#define GNNSCOPE_CUDRV_SHIM_H
#include <cuda.h>

const char *gs_load(const char *lib);
int gs_loaded(void);
const char *gs_error_name(CUresult r);
const char *gs_error_string(CUresult r);
CUresult gs_module_load(CUmodule *m, const char *ptx, char *log, unsigned int logSize);
CUresult gs_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, CUstream s, unsigned long long *vals, int n);
CUresult gs_init(void);
CUresult gs_driver_version(int *v);
CUresult gs_device_count(int *n);
CUresult gs_device_get(CUdevice *d, int ordinal);
CUresult gs_device_name(char *name, int len, CUdevice d);
CUresult gs_device_total_mem(size_t *bytes, CUdevice d);
CUresult gs_device_attribute(int *v, CUdevice_attribute a, CUdevice d);
CUresult gs_device_uuid(CUuuid *u, CUdevice d);
CUresult gs_primary_ctx_retain(CUcontext *c, CUdevice d);
CUresult gs_primary_ctx_release(CUdevice d);
CUresult gs_ctx_set_current(CUcontext c);
CUresult gs_ctx_synchronize(void);
CUresult gs_mem_alloc(CUdeviceptr *p, size_t n);
CUresult gs_mem_free(CUdeviceptr p);
CUresult gs_mem_get_info(size_t *free, size_t *total);
CUresult gs_mem_host_alloc_mapped(void **p, size_t n);
CUresult gs_mem_free_host(void *p);
CUresult gs_mem_host_device_pointer(CUdeviceptr *d, void *p);
CUresult gs_memcpy_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult gs_memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gs_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult gs_memset_d32_async(CUdeviceptr p, unsigned int v, size_t n, CUstream s);
CUresult gs_stream_create(CUstream *s, unsigned int flags);
CUresult gs_stream_destroy(CUstream s);
CUresult gs_stream_synchronize(CUstream s);
CUresult gs_stream_wait_event(CUstream s, CUevent e);
CUresult gs_event_create(CUevent *e, unsigned int flags);
CUresult gs_event_destroy(CUevent e);
CUresult gs_event_record(CUevent e, CUstream s);
CUresult gs_event_query(CUevent e);
CUresult gs_event_synchronize(CUevent e);
CUresult gs_event_elapsed(float *ms, CUevent from, CUevent to);
CUresult gs_module_unload(CUmodule m);
CUresult gs_module_function(CUfunction *f, CUmodule m, const char *name);

#endif
