//go:build unix

package sessions

import (
	"errors"
	"os"
	"syscall"
)

// processExists checks a pid with kill(pid, 0).
func processExists(pid int) (exists, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, true
	case errors.Is(err, syscall.ESRCH):
		return false, true
	}
	return false, false
}

// nonblockFlag opens files without blocking: a FIFO's open returns at
// once (and is then refused as not regular); regular files ignore it.
const nonblockFlag = syscall.O_NONBLOCK

// CheckWritable tells, without writing, whether this process may create
// files in the folder dir (access(2) for write and search): nil if it
// may, else an error naming dir, such as "write DIR: permission denied".
func CheckWritable(dir string) error {
	const wOK, xOK = 0x2, 0x1
	if err := syscall.Access(dir, wOK|xOK); err != nil {
		return &os.PathError{Op: "write", Path: dir, Err: err}
	}
	return nil
}
