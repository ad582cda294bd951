//go:build unix && !linux

package runner

import (
	"errors"
	"syscall"
)

// setPdeathsig does nothing: only Linux has a parent-death signal.
func setPdeathsig(*syscall.SysProcAttr) {}

// becomeSubreaper is unsupported: only Linux has child subreapers (the
// command's process group is still ended as a whole).
func becomeSubreaper() error { return errors.ErrUnsupported }

// ownChildren lists nothing: orphans go to init here.
func ownChildren() []int { return nil }
