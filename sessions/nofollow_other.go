//go:build !unix

package sessions

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// dirHandle is a folder checked not to be a symbolic link. Without
// openat here, each open checks the file it opened against what Lstat
// found at its path (the same file, not a link).
type dirHandle struct {
	path string
}

// openDirNoFollow checks that dir is a folder and not a symbolic link.
func openDirNoFollow(dir string) (*dirHandle, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, symlinkErr(dir)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	return &dirHandle{path: dir}, nil
}

func (d *dirHandle) close() {}

// open opens name in the folder with flag and perm, refusing a symbolic
// link at name and anything but a regular file.
func (d *dirHandle) open(name string, flag int, perm fs.FileMode) (*os.File, error) {
	path := filepath.Join(d.path, name)
	if isLink(path) {
		return nil, symlinkErr(path)
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err == nil {
		// the file opened is the one checked, not a link planted since
		if li, lerr := os.Lstat(path); lerr != nil || !os.SameFile(fi, li) {
			err = symlinkErr(path)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// createTemp creates a new file named prefix and random digits in the
// folder.
func (d *dirHandle) createTemp(prefix string, perm fs.FileMode) (*os.File, string, error) {
	f, err := createTemp(d.path, prefix, perm)
	if err != nil {
		return nil, "", err
	}
	return f, filepath.Base(f.Name()), nil
}

// rename renames from to to, both in the folder.
func (d *dirHandle) rename(from, to string) error {
	return os.Rename(filepath.Join(d.path, from), filepath.Join(d.path, to))
}

// remove removes the file name of the folder.
func (d *dirHandle) remove(name string) { os.Remove(filepath.Join(d.path, name)) }

// openNoFollow opens path for a write inside the store: neither path
// nor its folder may be a symbolic link (ErrSymlink), and path must be a
// regular file (ErrNotRegular).
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	d, err := openDirNoFollow(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	return d.open(base, flag, perm)
}
