package sessions

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileAtomic writes the file at path through a temporary file in the
// same folder: write fills it, then it is synced and renamed over path.
// Readers see the old content or the new, never a part, and a failed
// write leaves path as it was and no temporary file behind. Errors name
// path.
//
// The file is created with mode perm less the umask, as os.OpenFile
// creates files, and never changed after: it is never more open than the
// umask allows. The store's own files use 0600; a file the user writes to
// a path of their choice (an export) uses 0666, so the umask decides.
func WriteFileAtomic(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := createTemp(filepath.Dir(path), fmt.Sprintf("%sp%d-", tempPrefix(path), os.Getpid()), perm)
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
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// createTemp creates a new file named prefix and random digits in dir,
// with mode perm less the umask (os.CreateTemp would force 0600).
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(r[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm.Perm())
		if err == nil || !errors.Is(err, fs.ErrExist) || try >= 100 {
			return f, err
		}
	}
}

// writeFileAtomic writes data to path, a file of the store, with
// WriteStoreFile, mode 0600.
func writeFileAtomic(path string, data []byte) error {
	return WriteStoreFile(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// replaceable checks that the existing file at path (fi, from Lstat) is
// a regular file, or a link to one.
func replaceable(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Stat(path)
		switch {
		case err != nil:
			return fmt.Errorf("%s: a symbolic link to nothing readable: %w", path, ErrNotRegular)
		case !target.Mode().IsRegular():
			return fmt.Errorf("%s: a symbolic link to %s: %w", path, fileKind(target.Mode()), ErrNotRegular)
		}
		return nil
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	return nil
}

// ErrOutputExists is returned by PrepareOutput for a file that exists
// and may not be overwritten.
var ErrOutputExists = errors.New("exists")

// PrepareOutput readies path for a file the user asked for (an export):
// it refuses a path that exists unless overwrite is set (an error
// wrapping ErrOutputExists) and creates the folders above it that are
// missing (mode 0777 less the umask). Only a regular file may be
// replaced: a folder, a device, a FIFO, a socket, or a link to one of
// them (or to nothing) is refused whatever overwrite says, so that
// `-o /dev/null --force` never replaces a device with a file.
func PrepareOutput(path string, overwrite bool) error {
	if strings.TrimSpace(path) == "" {
		return errors.New("no file given")
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a folder", path)
		}
		if err := replaceable(path, fi); err != nil {
			return err
		}
		if !overwrite {
			return fmt.Errorf("%s: %w", path, ErrOutputExists)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("create the folder of %s: %w", path, err)
	}
	return nil
}
