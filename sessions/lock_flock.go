//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package sessions

import (
	"errors"
	"os"
	"syscall"
)

// flockFile applies flock operation how to f, retrying when a signal
// interrupts it.
func flockFile(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLock takes a lock on f without waiting: ErrLocked if another open
// file holds a conflicting one.
func tryLock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := flockFile(f, how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// waitShared takes a shared lock on f, waiting for an exclusive one to go.
func waitShared(f *os.File) error { return flockFile(f, syscall.LOCK_SH) }

// unlockFile drops f's lock.
func unlockFile(f *os.File) error { return flockFile(f, syscall.LOCK_UN) }
