//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package data

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// mapping holds a whole file read into memory, for systems where the cache
// is not memory-mapped.
type mapping struct{ mem []byte }

func (m mapping) bytes() []byte { return m.mem }

func (m mapping) unmap() error { return nil }

// mapFile reads the file into an 8-byte aligned buffer.
func mapFile(f *os.File, size int64) (mapping, error) {
	if int64(int(size)) != size {
		return mapping{}, fmt.Errorf("file of %d bytes is too large to read", size)
	}
	words := make([]uint64, (size+7)/8)
	if len(words) == 0 {
		return mapping{}, nil
	}
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), mem); err != nil {
		return mapping{}, fmt.Errorf("read: %w", err)
	}
	return mapping{mem: mem}, nil
}
