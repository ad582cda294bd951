package sessions

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes the file at path through a temporary file in the
// same folder: write fills it, then it is synced, given mode perm and
// renamed over path. Readers see the old content or the new, never a
// part, and a failed write leaves path as it was and no temporary file
// behind. Errors name path.
func WriteFileAtomic(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to path with WriteFileAtomic, mode 0644.
func writeFileAtomic(path string, data []byte) error {
	return WriteFileAtomic(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
