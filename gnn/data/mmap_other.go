//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package data

import "os"

// mapping holds a whole file read into memory, for systems where the cache
// is not memory-mapped.
type mapping struct{ mem []byte }

func (m mapping) bytes() []byte { return m.mem }

func (m mapping) unmap() error { return nil }

// drop does nothing: the file was read into memory, which the garbage
// collector owns.
func (m mapping) drop(b []byte) (bool, error) { return false, nil }

// mapFile reads the file into an 8-byte aligned buffer.
func mapFile(f *os.File, size int64) (mapping, error) {
	mem, err := readWhole(f, size)
	return mapping{mem: mem}, err
}

// openRegular opens path for reading if it is a regular file. The check
// comes before the open, so a FIFO swapped in between could still block.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(fi)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(fi)
		}
		return nil, nil, err
	}
	return f, fi, nil
}
