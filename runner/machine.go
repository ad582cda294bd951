package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
)

// Machine is what a run's plan knows of the machine it runs on (see
// PlanMachine): the cores the process may use, the host memory it may
// still take, and the GPU's memory.
type Machine struct {
	// CPUs is the logical CPUs the process may run on (its affinity
	// mask; runtime.NumCPU reads it on Linux).
	CPUs int
	// Quota is the CPU time the process's cgroup allows, in cores (cgroup
	// v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us); 0: none.
	Quota float64
	// HostFree is the host memory the process may still take
	// (data.AvailableMemory); 0: unknown.
	HostFree int64
	// GPU marks a CUDA device; DeviceFree is its free memory (the room
	// device.Room reports: the budget's room under a memory budget).
	GPU        bool
	DeviceFree int64
}

// Cores returns the cores the process may keep busy: its CPUs, bounded by
// the cgroup quota rounded down, at least 1.
func (m Machine) Cores() int {
	c := max(m.CPUs, 1)
	if m.Quota > 0 {
		c = min(c, max(int(math.Floor(m.Quota)), 1))
	}
	return c
}

// String describes the cores as the plan's lines cite them.
func (m Machine) String() string {
	s := fmt.Sprintf("%d cores usable (%d CPUs in the affinity mask", m.Cores(), m.CPUs)
	if m.Quota > 0 {
		s += fmt.Sprintf(", cgroup quota %.2g cores", m.Quota)
	}
	return s + ")"
}

// DescribeMachine describes this machine for a run on dev (nil: none
// opened yet): the affinity mask, the process's cgroup CPU quota under
// /sys/fs/cgroup, the host memory left and, on a CUDA device, its room.
func DescribeMachine(dev device.Device) Machine {
	m := Machine{CPUs: runtime.NumCPU(), HostFree: data.AvailableMemory()}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err == nil {
		m.Quota = cgroupQuota("/sys/fs/cgroup", cg)
	}
	if dev != nil {
		if d, ok := device.Unwrap(dev).(device.Describer); ok && d.Info().Backend == device.KindCUDA {
			m.GPU = true
			m.DeviceFree = max(device.Room(dev), 0)
		}
	}
	return m
}

// cgroupQuota returns the CPU quota in cores of the process whose
// /proc/self/cgroup is self, with the cgroup file systems under root: the
// v2 unified group's cpu.max, else the v1 cpu controller's
// cpu.cfs_quota_us over cpu.cfs_period_us; 0 when there is none. Each is
// looked up in the process's own group first, then at the mount's top
// (a container sees its own group there).
func cgroupQuota(root string, self []byte) float64 {
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := filepath.Clean("/" + parts[2])
		switch {
		case parts[0] == "0" && parts[1] == "":
			for _, dir := range []string{filepath.Join(root, path), root} {
				if q, ok := cpuMaxV2(filepath.Join(dir, "cpu.max")); ok {
					return q
				}
			}
		case hasController(parts[1], cpuController):
			for _, dir := range []string{filepath.Join(root, parts[1], path), filepath.Join(root, cpuController, path), filepath.Join(root, parts[1]), filepath.Join(root, cpuController)} {
				if q, ok := cpuQuotaV1(dir); ok {
					return q
				}
			}
		}
	}
	return 0
}

// cpuController is the cgroup v1 CPU controller's name (and its mount's
// usual folder).
const cpuController = "cpu" // not a device kind

// hasController reports whether a v1 hierarchy's controller list (cpu,cpuacct)
// holds name.
func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cpuMaxV2 reads a cgroup v2 cpu.max ("max 100000" or "150000 100000"):
// the quota in cores, 0 for max; false when the file cannot be read or
// parsed.
func cpuMaxV2(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	if f[0] == "max" {
		return 0, true
	}
	period := 100000.0
	if len(f) > 1 {
		p, err := strconv.ParseFloat(f[1], 64)
		if err != nil || p <= 0 {
			return 0, false
		}
		period = p
	}
	q, err := strconv.ParseFloat(f[0], 64)
	if err != nil || q <= 0 {
		return 0, false
	}
	return q / period, true
}

// cpuQuotaV1 reads a cgroup v1 cpu controller's cpu.cfs_quota_us (-1: no
// limit) and cpu.cfs_period_us in dir.
func cpuQuotaV1(dir string) (float64, bool) {
	read := func(name string) (float64, bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		return v, err == nil
	}
	q, ok := read("cpu.cfs_quota_us")
	if !ok {
		return 0, false
	}
	if q <= 0 {
		return 0, true
	}
	p, ok := read("cpu.cfs_period_us")
	if !ok || p <= 0 {
		return 0, false
	}
	return q / p, true
}
