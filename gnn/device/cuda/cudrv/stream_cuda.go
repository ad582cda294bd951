//go:build cuda

package cudrv

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import "unsafe"

// Stream is a CUDA stream; the zero Stream is the legacy default stream.
type Stream struct{ s C.CUstream }

// NewStream creates a stream that does not synchronize with the legacy
// default stream.
func NewStream() (Stream, error) {
	var s C.CUstream
	err := check("cuStreamCreate", C.gs_stream_create(&s, C.CU_STREAM_NON_BLOCKING))
	return Stream{s}, err
}

// IsZero reports whether s is the zero Stream.
func (s Stream) IsZero() bool { return s.s == nil }

// Handle returns the stream's CUstream, for libraries loaded beside the
// driver (cuBLAS).
func (s Stream) Handle() unsafe.Pointer { return unsafe.Pointer(s.s) }

// Destroy destroys the stream (work queued on it still completes).
func (s Stream) Destroy() error { return check("cuStreamDestroy", C.gs_stream_destroy(s.s)) }

// Synchronize waits for the work queued on s.
func (s Stream) Synchronize() error {
	return check("cuStreamSynchronize", C.gs_stream_synchronize(s.s))
}

// Wait makes work queued on s after this call wait for e's work.
func (s Stream) Wait(e Event) error {
	return check("cuStreamWaitEvent", C.gs_stream_wait_event(s.s, e.e))
}

// Event is a CUDA event.
type Event struct{ e C.CUevent }

// NewEvent creates an event, with timing or without (cheaper to record
// and wait for).
func NewEvent(timing bool) (Event, error) {
	var e C.CUevent
	flags := C.uint(C.CU_EVENT_DISABLE_TIMING)
	if timing {
		flags = C.CU_EVENT_DEFAULT
	}
	err := check("cuEventCreate", C.gs_event_create(&e, flags))
	return Event{e}, err
}

// Destroy destroys the event.
func (e Event) Destroy() error { return check("cuEventDestroy", C.gs_event_destroy(e.e)) }

// Record captures the work queued on s so far.
func (e Event) Record(s Stream) error { return check("cuEventRecord", C.gs_event_record(e.e, s.s)) }

// Query returns nil when the captured work has completed, an error for
// which IsNotReady holds while it runs, or another error.
func (e Event) Query() error { return check("cuEventQuery", C.gs_event_query(e.e)) }

// Synchronize waits for the captured work.
func (e Event) Synchronize() error { return check("cuEventSynchronize", C.gs_event_synchronize(e.e)) }

// Elapsed returns the milliseconds from e to later (both timing events,
// both completed).
func (e Event) Elapsed(later Event) (float64, error) {
	var ms C.float
	err := check("cuEventElapsedTime", C.gs_event_elapsed(&ms, e.e, later.e))
	return float64(ms), err
}

// Module is a loaded PTX module.
type Module struct{ m C.CUmodule }

// LoadModule JIT-compiles PTX for the current context's device. On failure
// the error includes the JIT compiler's log.
func LoadModule(ptx string) (Module, error) {
	src := C.CString(ptx)
	defer C.free(unsafe.Pointer(src))
	var log [16 << 10]C.char
	var m C.CUmodule
	if err := check("cuModuleLoadDataEx", C.gs_module_load(&m, src, &log[0], C.uint(len(log)))); err != nil {
		if s := C.GoString(&log[0]); s != "" {
			return Module{}, &jitError{err: err, log: s}
		}
		return Module{}, err
	}
	return Module{m}, nil
}

type jitError struct {
	err error
	log string
}

func (e *jitError) Error() string { return e.err.Error() + ": " + e.log }
func (e *jitError) Unwrap() error { return e.err }

// Unload unloads the module.
func (m Module) Unload() error { return check("cuModuleUnload", C.gs_module_unload(m.m)) }

// Function returns a kernel of the module.
func (m Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.CUfunction
	err := check("cuModuleGetFunction", C.gs_module_function(&f, m.m, cname))
	return Function{f}, err
}

// Function is a kernel.
type Function struct{ f C.CUfunction }

// MaxParams is the most parameters Launch passes.
const MaxParams = 32

// Launch queues the kernel on s with a grid of gx×gy×gz blocks of bx×by×bz
// threads and shared bytes of dynamic shared memory. Parameter i is
// vals[i]: its low bytes, little-endian, as many as the kernel's parameter
// type has.
func (f Function) Launch(gx, gy, gz, bx, by, bz, shared int, s Stream, vals []uint64) error {
	if len(vals) > MaxParams {
		return &Error{Call: "cuLaunchKernel", Code: int(C.CUDA_ERROR_INVALID_VALUE), Name: "CUDA_ERROR_INVALID_VALUE", Text: "too many parameters"}
	}
	var p *C.ulonglong
	if len(vals) > 0 {
		p = (*C.ulonglong)(unsafe.Pointer(&vals[0]))
	}
	return check("cuLaunchKernel", C.gs_launch(f.f, C.uint(gx), C.uint(gy), C.uint(gz), C.uint(bx), C.uint(by), C.uint(bz),
		C.uint(shared), s.s, p, C.int(len(vals))))
}
