package sessions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Output is a file the user asked for (an export) while it is written:
// through a temporary file beside it and a rename (see WriteFileAtomic).
// Without overwrite, the file is first created empty with O_EXCL, so two
// writers of the same new file cannot both succeed: the second is refused
// (ErrOutputExists) instead of silently replacing the first.
type Output struct {
	mu       sync.Mutex // Abort may come from a signal while Write runs
	path     string
	reserved fs.FileInfo // the empty file this Output created, if any
}

// CreateOutput readies path (see PrepareOutput: a folder, a device, a
// FIFO or a link to one is refused, --force or not), removes the
// temporary files that interrupted writers of path left (their process
// gone) and, unless overwrite is set, claims path by creating it
// exclusively.
func CreateOutput(path string, overwrite bool) (*Output, error) {
	if err := PrepareOutput(path, overwrite); err != nil {
		return nil, err
	}
	RemoveStaleTemps(path)
	o := &Output{path: path}
	if overwrite {
		return o, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrOutputExists)
		}
		return nil, err
	}
	o.reserved, err = f.Stat()
	f.Close()
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return o, nil
}

// Path returns the file's path.
func (o *Output) Path() string { return o.path }

// Write writes the file (see WriteFileAtomic, mode perm less the umask).
// A failed write leaves no file behind: neither the temporary file nor the
// empty file that claimed path.
func (o *Output) Write(perm fs.FileMode, write func(io.Writer) error) error {
	if err := WriteFileAtomic(o.path, perm, write); err != nil {
		o.Abort()
		return err
	}
	o.mu.Lock()
	o.reserved = nil
	o.mu.Unlock()
	return nil
}

// Abort removes what this process left of the file: its temporary files
// and the empty file that claimed path (when it is still that empty
// file). What an interrupted command calls before it exits.
func (o *Output) Abort() {
	o.mu.Lock()
	defer o.mu.Unlock()
	removeTemps(o.path, func(pid int) bool { return pid == os.Getpid() })
	if o.reserved == nil {
		return
	}
	if fi, err := os.Lstat(o.path); err == nil && os.SameFile(fi, o.reserved) && fi.Size() == 0 {
		os.Remove(o.path)
	}
	o.reserved = nil
}

// tempPrefix is the start of the names of path's temporary files:
// ".BASE.tmp", then "p", the writer's pid, "-" and random digits.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// RemoveStaleTemps removes the temporary files of path (see
// WriteFileAtomic) whose writer is gone: what an export killed or
// interrupted before its rename left beside path.
func RemoveStaleTemps(path string) {
	removeTemps(path, func(pid int) bool {
		exists, known := processExists(pid)
		return known && !exists
	})
}

// removeTemps removes path's temporary files whose writer's pid passes
// gone.
func removeTemps(path string, gone func(pid int) bool) {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(path) + "p"
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		digits, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if ok && err == nil && pid > 0 && gone(pid) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
