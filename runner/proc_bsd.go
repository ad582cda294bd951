//go:build unix && !linux

package runner

import "syscall"

// setPdeathsig does nothing: only Linux has a parent-death signal.
func setPdeathsig(*syscall.SysProcAttr) {}
