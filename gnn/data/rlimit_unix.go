//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package data

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSpaceLeft returns how much address space this process may still
// map under its RLIMIT_AS (ulimit -v): the limit less the current virtual
// size (from /proc/self/statm where there is one), or 0 when there is no
// limit.
func addressSpaceLeft() int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return 0
	}
	limit := uint64(lim.Cur) // int64 on some systems; RLIM_INFINITY is above 1<<62 on all
	if limit > 1<<62 {
		return 0
	}
	used := int64(0)
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if pages, err := strconv.ParseInt(f[0], 10, 64); err == nil && pages > 0 {
				used = pages * int64(os.Getpagesize())
			}
		}
	}
	if used >= int64(limit) {
		return 1 // at the limit: nothing is left, but 0 would mean no limit
	}
	return int64(limit) - used
}
