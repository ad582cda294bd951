//go:build cuda

package cudrv

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// DevicePtr is a device address.
type DevicePtr uintptr

// MemAlloc allocates n bytes of device memory.
func MemAlloc(n int64) (DevicePtr, error) {
	var p C.CUdeviceptr
	err := check("cuMemAlloc", C.gs_mem_alloc(&p, C.size_t(n)))
	return DevicePtr(p), err
}

// MemFree frees device memory of MemAlloc.
func MemFree(p DevicePtr) error { return check("cuMemFree", C.gs_mem_free(C.CUdeviceptr(p))) }

// MemInfo returns the device's free and total memory.
func MemInfo() (free, total int64, err error) {
	var f, t C.size_t
	err = check("cuMemGetInfo", C.gs_mem_get_info(&f, &t))
	return int64(f), int64(t), err
}

// MemHostAllocMapped allocates n bytes of page-locked host memory,
// portable across contexts and mapped into the device's address space.
func MemHostAllocMapped(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := check("cuMemHostAlloc", C.gs_mem_host_alloc_mapped(&p, C.size_t(n)))
	return p, err
}

// MemHostDevicePointer returns the device address of mapped host memory.
func MemHostDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	var d C.CUdeviceptr
	err := check("cuMemHostGetDevicePointer", C.gs_mem_host_device_pointer(&d, p))
	return DevicePtr(d), err
}

// MemFreeHost frees page-locked host memory.
func MemFreeHost(p unsafe.Pointer) error { return check("cuMemFreeHost", C.gs_mem_free_host(p)) }

// MemcpyHtoDAsync queues a copy of n bytes from host src to device dst on
// s. src must stay valid until the copy has run (page-locked memory, or
// ordinary memory the driver stages before returning).
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return check("cuMemcpyHtoDAsync", C.gs_memcpy_htod_async(C.CUdeviceptr(dst), src, C.size_t(n), s.s))
}

// MemcpyDtoHAsync queues a copy of n bytes from device src to host dst.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoHAsync", C.gs_memcpy_dtoh_async(dst, C.CUdeviceptr(src), C.size_t(n), s.s))
}

// MemcpyDtoDAsync queues a device-to-device copy of n bytes.
func MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return check("cuMemcpyDtoDAsync", C.gs_memcpy_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.s))
}

// MemsetD32Async queues setting n 32-bit words at p to v.
func MemsetD32Async(p DevicePtr, v uint32, n int64, s Stream) error {
	return check("cuMemsetD32Async", C.gs_memset_d32_async(C.CUdeviceptr(p), C.uint(v), C.size_t(n), s.s))
}
