//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos)

package sessions

import (
	"errors"
	"os"
)

// tryLock cannot lock here: readers fall back to pid files.
func tryLock(*os.File, bool) error { return errors.ErrUnsupported }

// waitShared cannot lock here.
func waitShared(*os.File) error { return errors.ErrUnsupported }

// unlockFile has nothing to drop.
func unlockFile(*os.File) error { return nil }
