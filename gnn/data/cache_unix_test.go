//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCacheTruncatedWhileMapped is the case of a .gsd truncated under a
// running worker, which used to kill it with SIGBUS: reads of the mapping
// made through Guard (as Load's validation makes them) return an error
// naming the file instead.
func TestCacheTruncatedWhileMapped(t *testing.T) {
	path, d := saveMapped(t, ringDataset(3000, 8, 5)) // about 150 KB: many pages
	defer Release(d)
	if err := Guard(d, d.Validate); err != nil {
		t.Fatalf("intact mapping: %v", err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var sum float32
	err := Guard(d, func() error {
		for _, v := range d.X {
			sum += v
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("reading a truncated mapping: %v", err)
	}
	// The same holds for the validation that Load runs on the mapping.
	if err := Guard(d, d.Validate); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("validating a truncated mapping: %v", err)
	}
}

// TestCacheSmallFileRead checks that a small cache file is read, not
// mapped: truncating it afterwards leaves the Dataset whole.
func TestCacheSmallFileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.gsd")
	want := ringDataset(100, 4, 3)
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(d)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	sameDataset(t, want, d)
}

// TestGuardPassesOtherPanics checks that Guard recovers memory faults only.
func TestGuardPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the original panic", r)
		}
	}()
	guardFault("x.gsd", func() error { panic("boom") })
	t.Error("the panic was swallowed")
}

// TestCacheLoadNotRegular checks that a FIFO or a device in place of a
// cache file is refused at once, with an error naming it, instead of
// hanging in open.
func TestCacheLoadNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.gsd")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "named pipe"},
		{os.DevNull, "device"},
		{t.TempDir(), "folder"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(tc.path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error naming it as %s", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Load hangs", tc.path)
		}
	}
	// The check on the opened file catches a FIFO that the path check
	// missed, without blocking in open.
	f, _, err := openRegular(fifo)
	if err == nil {
		f.Close()
		t.Fatal("openRegular accepted a FIFO")
	}
}

// TestCacheFileMode checks that a saved cache file is private to its
// owner and never more open than the umask allows.
func TestCacheFileMode(t *testing.T) {
	dir := t.TempDir()
	for _, mask := range []int{0o022, 0o077, 0o277} {
		old := syscall.Umask(mask)
		path := filepath.Join(dir, "m.gsd")
		err := Save(path, ringDataset(10, 2, 2))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := os.FileMode(0o600 &^ mask); fi.Mode().Perm() != want {
			t.Errorf("umask %03o: mode %v, want %v", mask, fi.Mode().Perm(), want)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// saveMapped saves want to a cache file in a temporary folder and loads it
// back mapped, whatever its size.
func saveMapped(t *testing.T, want *Dataset) (string, *Dataset) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.gsd")
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	d, err := load(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return path, d
}
