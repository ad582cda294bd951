package memory

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HostRSS returns the resident set size of this process in bytes, read from
// /proc/self/statm (Linux); elsewhere it returns an error.
func HostRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("host rss: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("host rss: unexpected /proc/self/statm %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("host rss: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
