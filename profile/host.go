package profile

import (
	"bufio"
	"io"
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
		CPU:   CPUModel(),
		Cores: runtime.GOMAXPROCS(0),
		Go:    runtime.Version(),
		OS:    runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:  onlineCPUs(),
		Load:  LoadAverage(),
	}
	h.Hostname, _ = os.Hostname()
	return h
}

// CPUModel returns the processor's model name from /proc/cpuinfo, or ""
// where there is none to read.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return cpuModel(f)
}

// cpuModel reads a /proc/cpuinfo listing: the first model name under
// the key x86 ("model name"), arm ("Model") or mips ("cpu model") uses.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
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
