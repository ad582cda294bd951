//go:build cuda

package cudrv

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// ErrNoDriver is wrapped by Init's error when the driver library cannot be
// loaded or lacks an entry point.
var ErrNoDriver = errors.New("no CUDA driver")

// Library is the driver library's name as the dynamic loader looks it up.
const Library = "libcuda.so.1"

var (
	initOnce sync.Once
	initErr  error
)

// Init loads the driver library and initializes the driver, once per
// process; later calls return the first call's result.
func Init() error {
	initOnce.Do(func() { initErr = load(Library) })
	return initErr
}

// load opens lib, fills the entry-point table and calls cuInit.
func load(lib string) error {
	path := C.CString(lib)
	defer C.free(unsafe.Pointer(path))
	if msg := C.gs_load(path); msg != nil {
		text := C.GoString(msg)
		switch {
		case strings.HasPrefix(text, "missing "):
			return fmt.Errorf("%w: %s has no %s (a driver older than the CUDA 11.8 API)", ErrNoDriver, lib, strings.TrimPrefix(text, "missing "))
		case strings.Contains(text, "No such file"):
			return fmt.Errorf("%w: %s not found", ErrNoDriver, lib)
		}
		return fmt.Errorf("%w: loading %s: %s", ErrNoDriver, lib, text)
	}
	if err := check("cuInit", C.gs_init()); err != nil {
		return fmt.Errorf("initializing the CUDA driver: %w", err)
	}
	return nil
}

// DriverVersion returns the CUDA version the driver supports (1000*major +
// 10*minor), or 0 before Init.
func DriverVersion() int {
	var v C.int
	if C.gs_driver_version(&v) != C.CUDA_SUCCESS {
		return 0
	}
	return int(v)
}

// Error is a failed driver call.
type Error struct {
	Call string // the driver function, e.g. "cuMemAlloc"
	Code int    // its CUresult
	Name string // the driver's name for the code, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Text string // the driver's description, if any
}

func (e *Error) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, e.Code, e.Text)
	}
	return fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code)
}

// check turns a driver result into nil or an *Error naming the call.
func check(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	if r == C.CUDA_ERROR_NOT_INITIALIZED && !driverLoaded() {
		return &Error{Call: call, Code: int(r), Name: "CUDA_ERROR_NOT_INITIALIZED", Text: "the CUDA driver is not loaded"}
	}
	return &Error{Call: call, Code: int(r), Name: C.GoString(C.gs_error_name(r)), Text: C.GoString(C.gs_error_string(r))}
}

// IsOOM reports whether err is a driver call that ran out of device memory.
func IsOOM(err error) bool { return hasCode(err, C.CUDA_ERROR_OUT_OF_MEMORY) }

// NoGPU reports whether err says that this machine has no usable GPU: no
// driver library, or a driver that finds no device.
func NoGPU(err error) bool {
	return errors.Is(err, ErrNoDriver) || hasCode(err, C.CUDA_ERROR_NO_DEVICE)
}

// IsNotReady reports whether err is a query of work not yet complete.
func IsNotReady(err error) bool { return hasCode(err, C.CUDA_ERROR_NOT_READY) }

func hasCode(err error, code C.CUresult) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == int(code)
}

// driverLoaded reports whether the entry-point table is filled.
func driverLoaded() bool { return C.gs_loaded() != 0 }
