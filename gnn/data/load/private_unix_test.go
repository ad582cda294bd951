//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package load

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenPrivateCache checks that under umask 022 the cache folder that
// Open creates and the cache file in it are not readable by others.
func TestOpenPrivateCache(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache", "sub")
	old := syscall.Umask(0o022)
	d, err := Open("synth-tiny", Options{CacheDir: cacheDir})
	syscall.Umask(old)
	if err != nil || d == nil {
		t.Fatal(err)
	}
	for _, p := range append(cacheFiles(t, cacheDir), cacheDir, filepath.Dir(cacheDir)) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, open to others", p, fi.Mode().Perm())
		}
	}
}

// TestOpenFIFO checks that a FIFO given as a dataset, or standing in the
// cache folder in place of an entry, is refused or replaced at once with
// an error naming it, instead of hanging.
func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	npzPath := writeNPZ(t, dir)
	entry, err := CachePath(npzPath, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var fifos []string
	for _, p := range []string{filepath.Join(dir, "x.gsd"), filepath.Join(dir, "x.npz"), filepath.Join(dir, "x"), entry} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		fifos = append(fifos, p)
	}
	for _, p := range fifos[:3] {
		if err := within(t, func() error { _, err := Open(p, Options{CacheDir: cacheDir}); return err }); err == nil ||
			!strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", p, err)
		}
	}
	r := &recorder{}
	err = within(t, func() error {
		d, err := Open(npzPath, r.opts(cacheDir))
		if err == nil && d.NumNodes() != 3 {
			t.Errorf("%d nodes", d.NumNodes())
		}
		return err
	})
	if err != nil {
		t.Fatalf("FIFO as a cache entry: %v", err)
	}
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], entry) || !strings.Contains(r.warns[0], "named pipe") {
		t.Errorf("warnings %v", r.warns)
	}
	if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("cache entry not replaced by a file: %v", err)
	}
}

// within runs fn and fails the test if it takes more than 5 seconds.
func within(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("hangs")
	}
	return nil
}
