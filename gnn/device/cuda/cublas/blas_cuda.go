//go:build cuda

package cublas

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// libNames returns the cuBLAS libraries Find asks the dynamic loader for,
// newest first.
func libNames() []string { return []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"} }

// ErrNotFound is wrapped by Find's error when no cuBLAS could be loaded.
var ErrNotFound = errors.New("cuBLAS not found")

var (
	loadMu sync.Mutex
	loaded string // the library loaded, once one is
)

// Find loads cuBLAS (see the package documentation for the search order)
// and returns the path or name it loaded. Once one is loaded, later calls
// return it.
func Find(paths ...string) (string, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != "" {
		return loaded, nil
	}
	cands := append(append(append([]string{}, paths...), libNames()...), wheelLibs()...)
	var tried []string
	for _, c := range cands {
		msg := tryLoad(c)
		if msg == "" {
			loaded = c
			return c, nil
		}
		tried = append(tried, c+": "+msg)
	}
	return "", fmt.Errorf("%w (tried %s)", ErrNotFound, strings.Join(tried, "; "))
}

func tryLoad(lib string) string {
	s := C.CString(lib)
	defer C.free(unsafe.Pointer(s))
	if m := C.gsb_load(s); m != nil {
		return C.GoString(m)
	}
	return ""
}

// wheelLibs lists the cuBLAS libraries of NVIDIA's Python wheels (nvidia/
// cublas/lib for CUDA 11 and 12, nvidia/cu13/lib for CUDA 13) under the
// usual Python prefixes and the active virtual environment, newest major
// version first.
func wheelLibs() []string {
	roots := []string{"/usr/lib", "/usr/local/lib", "/opt/*/lib", "/opt/*/.venv/lib", "/opt/*/*/lib"}
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		roots = append([]string{filepath.Join(v, "lib")}, roots...)
	}
	if v := os.Getenv("CONDA_PREFIX"); v != "" {
		roots = append([]string{filepath.Join(v, "lib")}, roots...)
	}
	var out []string
	for _, r := range roots {
		for _, pkgs := range []string{"site-packages", "dist-packages"} {
			m, _ := filepath.Glob(filepath.Join(r, "python3*", pkgs, "nvidia", "*", "lib", "libcublas.so.*"))
			out = append(out, m...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return filepath.Base(out[i]) > filepath.Base(out[j]) })
	return out
}

// Handle is a cuBLAS handle bound to one stream. Its methods are safe for
// concurrent use.
type Handle struct {
	mu      sync.Mutex
	h       C.gs_blas_handle
	version int
}

// New creates a handle whose work runs on stream (a CUstream; nil for the
// legacy default stream). The CUDA context must be current.
func New(stream unsafe.Pointer) (*Handle, error) {
	if C.gsb_loaded() == 0 {
		return nil, fmt.Errorf("%w: call Find first", ErrNotFound)
	}
	h := &Handle{}
	if err := status("cublasCreate", C.gsb_create(&h.h)); err != nil {
		return nil, err
	}
	if err := status("cublasSetStream", C.gsb_set_stream(h.h, stream)); err != nil {
		C.gsb_destroy(h.h)
		return nil, err
	}
	var v C.int
	if err := status("cublasGetVersion", C.gsb_version(h.h, &v)); err == nil {
		h.version = int(v)
	}
	return h, nil
}

// Version returns cuBLAS's version (major*10000 + minor*100 + patch for
// cuBLAS 11 and later).
func (h *Handle) Version() int { return h.version }

// Close destroys the handle.
func (h *Handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return status("cublasDestroy", C.gsb_destroy(h.h))
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices at
// device addresses a, b, c with row strides lda, ldb, ldc (elements): C is
// m×n, op(A) m×k, op(B) k×n. A row-major matrix read column-major is its
// transpose, so this is cuBLAS's column-major Cᵀ = op(B)ᵀ·op(A)ᵀ.
func (h *Handle) Gemm(transA, transB bool, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return status("cublasSgemm", C.gsb_sgemm(h.h, op(transB), op(transA), C.int(n), C.int(m), C.int(k),
		C.float(alpha), C.ulonglong(b), C.int(ldb), C.ulonglong(a), C.int(lda), C.float(beta), C.ulonglong(c), C.int(ldc)))
}

func op(t bool) C.int {
	if t {
		return 1 // CUBLAS_OP_T
	}
	return 0 // CUBLAS_OP_N
}

// Error is a failed cuBLAS call.
type Error struct {
	Call   string
	Status int
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Call, statusName(e.Status), e.Status)
}

func status(call string, s C.int) error {
	if s == 0 {
		return nil
	}
	return &Error{Call: call, Status: int(s)}
}

// statusName names cuBLAS's status codes (cublas_api.h).
func statusName(s int) string {
	switch s {
	case -1:
		return "cuBLAS not loaded"
	case 1:
		return "CUBLAS_STATUS_NOT_INITIALIZED"
	case 3:
		return "CUBLAS_STATUS_ALLOC_FAILED"
	case 7:
		return "CUBLAS_STATUS_INVALID_VALUE"
	case 8:
		return "CUBLAS_STATUS_ARCH_MISMATCH"
	case 11:
		return "CUBLAS_STATUS_MAPPING_ERROR"
	case 13:
		return "CUBLAS_STATUS_EXECUTION_FAILED"
	case 14:
		return "CUBLAS_STATUS_INTERNAL_ERROR"
	case 15:
		return "CUBLAS_STATUS_NOT_SUPPORTED"
	case 16:
		return "CUBLAS_STATUS_LICENSE_ERROR"
	}
	return "cuBLAS error"
}
