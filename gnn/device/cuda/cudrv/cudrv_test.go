//go:build cuda

package cudrv

import (
	"errors"
	"strings"
	"testing"
)

// TestLoadMissingLibrary checks the error a machine without the driver
// library gets: ErrNoDriver, naming the library, and no panic.
func TestLoadMissingLibrary(t *testing.T) {
	err := load("libgnnscope-no-such-driver.so.1")
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("load of a missing library: %v", err)
	}
	for _, want := range []string{"no CUDA driver", "libgnnscope-no-such-driver.so.1 not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestLoadLibraryWithoutDriver loads a library that exists but is no
// driver (the C library): the first missing entry point is named.
func TestLoadLibraryWithoutDriver(t *testing.T) {
	err := load("libc.so.6")
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "has no cuInit") {
		t.Fatalf("load of libc: %v", err)
	}
}

// TestCallsWithoutDriver checks that calls made without a loaded driver
// return errors naming the call instead of crashing. It runs only where
// Init fails (a machine without a GPU or driver).
func TestCallsWithoutDriver(t *testing.T) {
	if err := Init(); err == nil {
		t.Skip("a CUDA driver and device are present")
	} else {
		t.Logf("Init: %v", err)
	}
	if !driverLoaded() {
		_, err := DeviceCount()
		var e *Error
		if !errors.As(err, &e) || e.Call != "cuDeviceGetCount" || e.Name != "CUDA_ERROR_NOT_INITIALIZED" {
			t.Fatalf("DeviceCount without a driver: %v", err)
		}
		if _, err := MemAlloc(1 << 20); err == nil || !strings.Contains(err.Error(), "cuMemAlloc") {
			t.Fatalf("MemAlloc without a driver: %v", err)
		}
	}
	if DriverVersion() < 0 {
		t.Fatal("negative driver version")
	}
}

// TestErrorText checks the form of a driver error and the OOM test.
func TestErrorText(t *testing.T) {
	e := &Error{Call: "cuMemAlloc", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"}
	if got := e.Error(); got != "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" {
		t.Fatalf("Error() = %q", got)
	}
	if !IsOOM(fmtWrap(e)) || IsNotReady(e) {
		t.Fatal("IsOOM/IsNotReady")
	}
}

func fmtWrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "alloc: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
