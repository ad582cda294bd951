//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package planetoid

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFIFO: a FIFO in place of one of the files is refused at once,
// naming it, instead of blocking until a writer comes.
func TestLoadFIFO(t *testing.T) {
	dir := t.TempDir()
	writePy2Fixture(t, dir, true)
	path := filepath.Join(dir, "ind.tiny.test.index")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load(dir, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load hangs on a FIFO")
	}
}
