//go:build cgo && linux

package nvml

import (
	"fmt"
	"strings"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Lib is an initialized NVML. Close it when done.
type Lib struct {
	mu     sync.Mutex
	lib    gonvml.Interface
	closed bool
}

// Open loads libnvidia-ml and initializes it. On a machine without it (or
// without a driver or GPU) the error wraps ErrNotAvailable and says why.
func Open() (*Lib, error) { return openPath("") }

// openPath is Open with the library at path ("" = the system's).
func openPath(path string) (l *Lib, err error) {
	defer func() {
		// go-nvml panics on some missing symbols of old libraries.
		if r := recover(); r != nil {
			l, err = nil, notAvailable("%v", r)
		}
	}()
	var opts []gonvml.LibraryOption
	if path != "" {
		opts = append(opts, gonvml.WithLibraryPath(path))
	}
	lib := gonvml.New(opts...)
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		if ret == gonvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, notAvailable("libnvidia-ml.so.1 cannot be loaded (no NVIDIA driver installed)")
		}
		return nil, notAvailable("nvmlInit: %v", ret)
	}
	return &Lib{lib: lib}, nil
}

// Close shuts NVML down.
func (l *Lib) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if ret := l.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: shutdown: %v", ret)
	}
	return nil
}

// DriverVersion returns the driver's version (e.g. "535.104.05").
func (l *Lib) DriverVersion() (string, error) {
	v, ret := l.lib.SystemGetDriverVersion()
	if ret != gonvml.SUCCESS {
		return "", fmt.Errorf("nvml: driver version: %v", ret)
	}
	return v, nil
}

// Count returns the number of GPUs.
func (l *Lib) Count() (int, error) {
	n, ret := l.lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return 0, fmt.Errorf("nvml: device count: %v", ret)
	}
	return n, nil
}

// DeviceByIndex returns GPU i in NVML's order (PCI bus order, which may
// differ from CUDA's; prefer DeviceByUUID for a CUDA device).
func (l *Lib) DeviceByIndex(i int) (*Device, error) {
	h, ret := l.lib.DeviceGetHandleByIndex(i)
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("nvml: device %d: %v", i, ret)
	}
	return l.wrap(h, i)
}

// DeviceByUUID returns the GPU with the given UUID ("GPU-…", as CUDA
// reports it).
func (l *Lib) DeviceByUUID(uuid string) (*Device, error) {
	if !strings.HasPrefix(uuid, "GPU-") {
		uuid = "GPU-" + uuid
	}
	h, ret := l.lib.DeviceGetHandleByUUID(uuid)
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("nvml: device %s: %v", uuid, ret)
	}
	i, _ := h.GetIndex()
	return l.wrap(h, i)
}

func (l *Lib) wrap(h gonvml.Device, i int) (*Device, error) {
	name, ret := h.GetName()
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("nvml: device %d: name: %v", i, ret)
	}
	uuid, _ := h.GetUUID()
	return &Device{lib: l, g: nvmlGPU{h}, Index: i, Name: name, UUID: uuid}, nil
}

// nvmlGPU reads one device.
type nvmlGPU struct{ h gonvml.Device }

func (g nvmlGPU) sample(pid int) (Sample, error) {
	mem, ret := g.h.GetMemoryInfo()
	if ret != gonvml.SUCCESS {
		return Sample{}, fmt.Errorf("nvml: memory info: %v", ret)
	}
	s := Sample{Used: int64(mem.Used), Total: int64(mem.Total), Process: -1}
	if u, ret := g.h.GetUtilizationRates(); ret == gonvml.SUCCESS {
		s.Util = float64(u.Gpu) / 100
	} else {
		return Sample{}, fmt.Errorf("nvml: utilization: %v", ret)
	}
	if procs, ret := g.h.GetComputeRunningProcesses(); ret == gonvml.SUCCESS {
		for _, p := range procs {
			if int(p.Pid) == pid {
				s.Process = int64(p.UsedGpuMemory)
			}
		}
	}
	return s, nil
}
