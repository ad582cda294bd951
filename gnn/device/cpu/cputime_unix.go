//go:build unix

package cpu

import (
	"syscall"
	"time"
)

// processCPUTime returns the user plus system CPU time this process has
// used, or 0 where it cannot be read.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
