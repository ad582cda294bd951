//go:build cuda

package cuda

/*
#cgo linux CFLAGS: -I/usr/local/cuda/include
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64 -lcuda
#include <cuda.h>

static CUresult gnnscope_host_alloc(void **p, size_t n) {
	return cuMemHostAlloc(p, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
}

static CUresult gnnscope_host_devptr(CUdeviceptr *d, void *p) {
	return cuMemHostGetDevicePointer(d, p, 0);
}

static const char *gnnscope_error_name(CUresult r) {
	const char *s = 0;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == 0) {
		return "unknown CUDA error";
	}
	return s;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// The few driver calls gorgonia.org/cu v0.9.6 does not wrap: page-locked
// host memory mapped into the device's address space.

// errDriver is a CUDA driver error returned by a call made here.
type errDriver struct {
	call string
	code int
	name string
}

func (e *errDriver) Error() string { return fmt.Sprintf("%s: %s (%d)", e.call, e.name, e.code) }

func driverErr(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return &errDriver{call: call, code: int(r), name: C.GoString(C.gnnscope_error_name(r))}
}

// isDriverOOM reports whether err is an out-of-memory error of a call made
// here.
func isDriverOOM(err error) bool {
	var e *errDriver
	return errors.As(err, &e) && e.code == int(C.CUDA_ERROR_OUT_OF_MEMORY)
}

// hostAllocMapped allocates n bytes of page-locked host memory, portable
// across contexts and mapped into the device's address space.
func hostAllocMapped(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := driverErr("cuMemHostAlloc", C.gnnscope_host_alloc(&p, C.size_t(n))); err != nil {
		return nil, err
	}
	return p, nil
}

// hostDevicePointer returns the device address of mapped host memory.
func hostDevicePointer(p unsafe.Pointer) (uintptr, error) {
	var d C.CUdeviceptr
	if err := driverErr("cuMemHostGetDevicePointer", C.gnnscope_host_devptr(&d, p)); err != nil {
		return 0, err
	}
	return uintptr(d), nil
}
