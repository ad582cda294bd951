//go:build unix

package sessions

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirHandle is a folder opened without following a symbolic link: what
// is opened relative to it stays in that folder.
type dirHandle struct {
	fd   int
	path string
}

// openDirNoFollow opens the folder dir, refusing a symbolic link in its
// place (ErrSymlink).
func openDirNoFollow(dir string) (*dirHandle, error) {
	for {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if isLink(dir) {
				return nil, symlinkErr(dir)
			}
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		return &dirHandle{fd: fd, path: dir}, nil
	}
}

func (d *dirHandle) close() { unix.Close(d.fd) }

// open opens name in the folder with flag and perm, never following a
// symbolic link at name, and refuses anything but a regular file.
func (d *dirHandle) open(name string, flag int, perm fs.FileMode) (*os.File, error) {
	path := filepath.Join(d.path, name)
	var fd int
	var err error
	for {
		fd, err = unix.Openat(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		var st unix.Stat_t
		if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			switch uint32(st.Mode) & unix.S_IFMT {
			case unix.S_IFLNK:
				return nil, symlinkErr(path)
			case unix.S_IFREG:
			default:
				return nil, notRegular(path, modeOf(uint32(st.Mode)))
			}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	return f, nil
}

// modeOf turns a stat mode's file type into an fs.FileMode.
func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeIrregular
}

// createTemp creates a new file named prefix and random digits in the
// folder, mode perm less the umask.
func (d *dirHandle) createTemp(prefix string, perm fs.FileMode) (*os.File, string, error) {
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", err
		}
		name := prefix + hex.EncodeToString(r[:])
		f, err := d.open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || try >= 100 {
			return f, name, err
		}
	}
}

// rename renames from to to, both in the folder; a link at to is
// replaced, not followed.
func (d *dirHandle) rename(from, to string) error {
	if err := unix.Renameat(d.fd, from, d.fd, to); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// remove removes the file name of the folder.
func (d *dirHandle) remove(name string) { unix.Unlinkat(d.fd, name, 0) }

// openNoFollow opens path for a write inside the store: neither path
// nor its folder may be a symbolic link (ErrSymlink), and path must be a
// regular file (ErrNotRegular). It never blocks on a FIFO.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	d, err := openDirNoFollow(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.open(base, flag, perm)
}
