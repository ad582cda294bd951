package python

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Files holds sitecustomize.py and the gnnscope package's modules. The
// pattern names the .py files themselves: a directory pattern would drop
// names that start with '_' (__init__.py, _client.py), and "all:" would
// take in the byte-code caches a local run leaves (Extract skips those
// anyway).
//
//go:embed sitecustomize.py gnnscope/*.py
var Files embed.FS

// Extract writes the embedded client under dir (created if missing): a file
// that already has the right content is left alone, others are written to a
// temporary file and renamed into place, so a Python process starting
// meanwhile never reads a partial module.
func Extract(dir string) error {
	return fs.WalkDir(Files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip(name, d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return fmt.Errorf("extract python client: %w", err)
			}
			return nil
		}
		b, err := Files.ReadFile(name)
		if err != nil {
			return fmt.Errorf("extract python client: %w", err)
		}
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, b) {
			return nil
		}
		if err := writeAtomic(dst, b); err != nil {
			return fmt.Errorf("extract python client: %w", err)
		}
		return nil
	})
}

// skip reports whether an embedded entry is a byte-code cache.
func skip(name string, d fs.DirEntry) bool {
	base := path.Base(name)
	if d.IsDir() {
		return base == "__pycache__"
	}
	return strings.HasSuffix(base, ".pyc") || strings.HasSuffix(base, ".pyo")
}

func writeAtomic(dst string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(dst), ".tmp-"+filepath.Base(dst)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil { // CreateTemp made it 0600: private, as the session is
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
