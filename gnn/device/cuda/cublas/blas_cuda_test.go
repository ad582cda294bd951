//go:build cuda

package cublas

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindMissing checks the fallback's error: every candidate is named
// with the loader's reason. It runs only where no cuBLAS is installed.
func TestFindMissing(t *testing.T) {
	if msg := tryLoad("libcublas.so.13"); msg == "" {
		t.Skip("cuBLAS is installed here")
	}
	for _, n := range libNames() {
		if tryLoad(n) == "" {
			t.Skipf("%s is installed here", n)
		}
	}
	if len(wheelLibs()) > 0 {
		t.Skip("a Python wheel's cuBLAS is installed here")
	}
	_, err := Find("/nonexistent/libcublas.so.99")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find without cuBLAS: %v", err)
	}
	for _, want := range []string{"/nonexistent/libcublas.so.99", "libcublas.so.13", "libcublas.so.11"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := New(nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("New before a library was found: %v", err)
	}
}

// TestLoadRejectsOtherLibrary loads a library that is not cuBLAS: the
// missing entry point is named and nothing is loaded.
func TestLoadRejectsOtherLibrary(t *testing.T) {
	if msg := tryLoad("libc.so.6"); msg != "missing cublasCreate_v2" {
		t.Fatalf("loading libc as cuBLAS: %q", msg)
	}
}

// TestWheelLibs checks the search of Python wheels' folders in a fake
// virtual environment, newest major version first.
func TestWheelLibs(t *testing.T) {
	venv := t.TempDir()
	for _, p := range []string{"nvidia/cublas/lib/libcublas.so.12", "nvidia/cu13/lib/libcublas.so.13"} {
		f := filepath.Join(venv, "lib", "python3.12", "site-packages", p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("VIRTUAL_ENV", venv)
	got := wheelLibs()
	if len(got) < 2 || !strings.HasSuffix(got[0], "cu13/lib/libcublas.so.13") || !strings.HasSuffix(got[1], "cublas/lib/libcublas.so.12") {
		t.Fatalf("wheelLibs = %v", got)
	}
}
