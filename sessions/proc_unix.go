//go:build unix

package sessions

import (
	"errors"
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
