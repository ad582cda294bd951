//go:build linux

package iostreams

import (
	"os"
	"syscall"
	"unsafe"
)

// IsTerminal reports whether f is a terminal: TCGETS succeeds on it (a
// character device such as /dev/null is not one).
func IsTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
