package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// readBelow is the size under which Load reads a cache file into memory
// instead of mapping it: copying a small file costs little, and a copy
// cannot be pulled from under a running process by a truncation, as a
// mapping can.
const readBelow = 32 << 20

// Guard runs fn, which reads the slices of d, and returns its error. When
// d was mapped from a cache file (see Load) that has since been truncated,
// reading a page past the file's new end makes the operating system raise
// a bus error, which would kill the process; Guard turns it into an error
// naming the file. Only the reads made by fn's own goroutine are covered:
// reads in goroutines that fn starts are not. For a Dataset that was not
// mapped, Guard simply calls fn.
func Guard(d *Dataset, fn func() error) error {
	mappings.Lock()
	m, ok := mappings.m[d]
	mappings.Unlock()
	if !ok {
		return fn()
	}
	return guardFault(m.path, fn)
}

// guardFault runs fn with memory faults turned into panics
// (debug.SetPanicOnFault) and recovers from them as an error naming path.
// Any other panic goes on.
func guardFault(path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		_, isFault := r.(interface{ Addr() uintptr })
		re, isRuntime := r.(runtime.Error)
		if !isFault || !isRuntime {
			panic(r)
		}
		err = fmt.Errorf("%s: the file changed while mapped (truncated?): %v; delete it to regenerate it", path, re)
	}()
	return fn()
}

// readWhole reads size bytes of f into an 8-byte aligned buffer, so that
// the int64, int32 and float32 sections can be viewed in place.
func readWhole(f *os.File, size int64) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, fmt.Errorf("file of %d bytes is too large to read", size)
	}
	words := make([]uint64, (size+7)/8)
	if len(words) == 0 {
		return nil, nil
	}
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), mem); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return mem, nil
}

// notRegular is the error for a cache path that is not a regular file.
func notRegular(fi os.FileInfo) error {
	kind := "not a regular file"
	switch t := fi.Mode().Type(); {
	case t&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO), not a regular file"
	case t&os.ModeDevice != 0:
		kind = "a device, not a regular file"
	case t&os.ModeSocket != 0:
		kind = "a socket, not a regular file"
	case t&os.ModeDir != 0:
		kind = "a folder, not a regular file"
	}
	return errors.New(kind)
}
