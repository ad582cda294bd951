//go:build cuda

package cudrv

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	var n C.int
	if err := check("cuDeviceGetCount", C.gs_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device is a CUDA device handle.
type Device struct{ d C.CUdevice }

// GetDevice returns the device of an ordinal.
func GetDevice(ordinal int) (Device, error) {
	var d C.CUdevice
	err := check("cuDeviceGet", C.gs_device_get(&d, C.int(ordinal)))
	return Device{d}, err
}

// Name returns the device's product name.
func (d Device) Name() (string, error) {
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.gs_device_name(&buf[0], C.int(len(buf)), d.d)); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// TotalMem returns the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	var n C.size_t
	err := check("cuDeviceTotalMem", C.gs_device_total_mem(&n, d.d))
	return int64(n), err
}

// Attribute is a device attribute.
type Attribute int

// The attributes gnnscope reads.
const (
	MultiprocessorCount    Attribute = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	ComputeCapabilityMajor Attribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	ComputeCapabilityMinor Attribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

// Attribute returns the value of a device attribute.
func (d Device) Attribute(a Attribute) (int, error) {
	var v C.int
	err := check("cuDeviceGetAttribute", C.gs_device_attribute(&v, C.CUdevice_attribute(a), d.d))
	return int(v), err
}

// UUID returns the device's UUID in nvidia-smi's form, without the "GPU-"
// prefix.
func (d Device) UUID() (string, error) {
	var u C.CUuuid
	if err := check("cuDeviceGetUuid", C.gs_device_uuid(&u, d.d)); err != nil {
		return "", err
	}
	b := C.GoBytes(unsafe.Pointer(&u.bytes[0]), 16)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// Context is a CUDA context.
type Context struct{ c C.CUcontext }

// RetainPrimaryCtx retains the device's primary context (the one the CUDA
// runtime and the libraries built on it, cuBLAS included, use).
func (d Device) RetainPrimaryCtx() (Context, error) {
	var c C.CUcontext
	err := check("cuDevicePrimaryCtxRetain", C.gs_primary_ctx_retain(&c, d.d))
	return Context{c}, err
}

// ReleasePrimaryCtx releases the primary context retained before.
func (d Device) ReleasePrimaryCtx() error {
	return check("cuDevicePrimaryCtxRelease", C.gs_primary_ctx_release(d.d))
}

// SetCurrent binds the context to the calling OS thread.
func (c Context) SetCurrent() error {
	return check("cuCtxSetCurrent", C.gs_ctx_set_current(c.c))
}

// Synchronize waits for all work of the current context.
func Synchronize() error { return check("cuCtxSynchronize", C.gs_ctx_synchronize()) }
