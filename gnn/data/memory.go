package data

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
)

// AvailableMemory returns the bytes this process can still allocate
// without being killed, as far as the host tells: the smallest of
// MemAvailable in /proc/meminfo, memory.max less memory.current inside a
// cgroup v2 with a limit, and the address space left under ulimit -v. It
// returns 0 when none is known (on systems without /proc, say): callers
// then apply no host limit.
func AvailableMemory() int64 {
	avail := int64(0)
	for _, v := range []int64{meminfoAvailable("/proc/meminfo"), cgroupAvailable("/sys/fs/cgroup"), addressSpaceLeft()} {
		if v > 0 && (avail == 0 || v < avail) {
			avail = v
		}
	}
	return avail
}

// meminfoAvailable reads MemAvailable (in kB) from a meminfo file.
func meminfoAvailable(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// cgroupAvailable returns memory.max - memory.current of the cgroup v2
// mounted at dir, or 0 when there is no limit or it cannot be read.
func cgroupAvailable(dir string) int64 {
	read := func(name string) int64 {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return -1
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v < 0 {
			return -1 // "max" means no limit
		}
		return v
	}
	limit := read("memory.max")
	if limit <= 0 {
		return 0
	}
	used := max(read("memory.current"), 0)
	if used >= limit {
		return 1 // at the limit: nothing is left, but 0 would mean unknown
	}
	return limit - used
}

// CheckAlloc returns an error when an allocation of bytes for what would
// not fit in limit bytes; a limit of 0 or less means the memory available
// on the host (AvailableMemory), and no check at all when that is unknown.
// Loaders call it with the size a file declares, before allocating, so
// that a hostile or mistaken header gives this error, with the estimate,
// instead of a fatal out-of-memory error.
func CheckAlloc(what string, bytes, limit int64) error {
	source := "the memory limit"
	if limit <= 0 {
		limit, source = AvailableMemory(), "the available memory"
	}
	if limit <= 0 || bytes <= limit {
		return nil
	}
	return fmt.Errorf("%s needs about %s, more than %s (%s)", what, units.Bytes(bytes), source, units.Bytes(limit))
}
