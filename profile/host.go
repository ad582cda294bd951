package profile

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// LocalHost describes this machine: CPU model (from /proc/cpuinfo where
// available), usable cores, Go version, GOOS/GOARCH, host name, online
// CPUs and the load average now. GPU and
// Driver are left for the device backend to fill in.
func LocalHost() Host {
	h := Host{
		CPU:   cpuModel(),
		Cores: runtime.GOMAXPROCS(0),
		Go:    runtime.Version(),
		OS:    runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:  onlineCPUs(),
		Load:  LoadAverage(),
	}
	h.Hostname, _ = os.Hostname()
	return h
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model", "cpu model":
			return strings.TrimSpace(v)
		}
	}
	return ""
}
