//go:build unix

package sessions

import (
	"errors"
	"os"
	"syscall"
)

// locksImports says that lockDir takes real locks on this platform.
const locksImports = true

// lockDir takes an exclusive lock (flock) on the folder dir without
// waiting; held is false if another open file holds it. The lock lasts
// until the returned file is closed, or its process ends.
func lockDir(dir string) (f *os.File, held bool, err error) {
	f, err = os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}
