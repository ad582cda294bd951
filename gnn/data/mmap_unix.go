//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package data

import (
	"fmt"
	"os"
	"syscall"
)

// mapping is a read-only, shared memory map of a whole file.
type mapping struct{ mem []byte }

func (m mapping) bytes() []byte { return m.mem }

func (m mapping) unmap() error {
	if len(m.mem) == 0 {
		return nil
	}
	return syscall.Munmap(m.mem)
}

// mapFile maps size bytes of f read-only (MAP_SHARED: pages come from and
// stay in the page cache, shared with every other process reading the file).
func mapFile(f *os.File, size int64) (mapping, error) {
	if size == 0 {
		return mapping{}, nil
	}
	if int64(int(size)) != size {
		return mapping{}, fmt.Errorf("file of %d bytes is too large to map", size)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return mapping{}, fmt.Errorf("mmap: %w", err)
	}
	return mapping{mem: mem}, nil
}

// openRegular opens path for reading if it is a regular file, and returns
// it with its information. A FIFO, a device or a socket is refused before
// it is opened; the open itself does not block (O_NONBLOCK), so a FIFO
// swapped in after the check cannot hang it either, and is refused by the
// check on the open file.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(fi)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
