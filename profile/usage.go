package profile

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// LoadAverage returns the 1-minute load average of the host (Linux
// /proc/loadavg), 0 where unknown.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// onlineCPUs returns the number of logical CPUs of the host (Linux
// /proc/stat's cpuN lines), else runtime.NumCPU.
func onlineCPUs() int {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return runtime.NumCPU()
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 3 && strings.HasPrefix(line, "cpu") && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}

// runQueueWait returns the seconds this process's live threads spent
// runnable but waiting for a CPU (the second field of Linux
// /proc/self/task/*/schedstat), 0 where unknown.
func runQueueWait() float64 {
	paths, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil {
		return 0
	}
	var ns int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil && v > 0 {
			ns += v
		}
	}
	return float64(ns) / 1e9
}

// ProcessUsage returns what this process got from its host since start:
// CPU time, run-queue wait, wall time, threads (GOMAXPROCS) and the load
// average now.
func ProcessUsage(start time.Time) Usage {
	return Usage{
		CPUS:    processCPU(),
		WaitS:   runQueueWait(),
		WallS:   time.Since(start).Seconds(),
		Threads: runtime.GOMAXPROCS(0),
		Load:    LoadAverage(),
	}
}
