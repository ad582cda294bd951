package sessions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is the reason a write inside the store refuses a path: the
// file, or the folder that holds it, is a symbolic link. Someone who can
// write to a session folder could otherwise point a run's log, pid file
// or canceled marker at any file its owner may write.
var ErrSymlink = errors.New("a symbolic link (not followed for a write inside the store)")

// writeFlags are the open flags that make an open a write.
const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREATE | os.O_TRUNC

// symlinkErr is the error of path, a symbolic link.
func symlinkErr(path string) error { return fmt.Errorf("%s: %w", path, ErrSymlink) }

// isLink reports whether path is a symbolic link (not followed).
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// WriteStoreFile is WriteFileAtomic for a file inside the store: the
// temporary file is created, and renamed over path, relative to a handle
// on path's folder opened without following a symbolic link, so neither
// a link at path nor a link in place of its folder redirects the write
// (an error wrapping ErrSymlink for the folder; a link at path is
// replaced, never written through).
func WriteStoreFile(path string, perm fs.FileMode, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	d, err := openDirNoFollow(filepath.Clean(dir))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.close()
	f, tmp, err := d.createTemp("."+base+".tmp", perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.rename(tmp, base)
	}
	if err != nil {
		d.remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
