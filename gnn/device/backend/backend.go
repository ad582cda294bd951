package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/device/nvml"
	"github.com/gnnscope/gnnscope/profile"
)

// Options configure Open.
type Options struct {
	// Threads is the CPU device's thread count, and the CUDA device's
	// goroutines for host-side row gathers (0 = all cores).
	Threads int
	// Budget caps the device's live tensor bytes (0 = unlimited).
	Budget int64
	// AsyncTransfer makes the CUDA device's host-to-device copies
	// asynchronous (a copy stream ordered by events); the CPU device
	// ignores it.
	AsyncTransfer bool
	// Gemm picks the CUDA device's matrix product: "" or GemmAuto
	// (cuBLAS where found, else the own kernel), GemmCUBLAS (required) or
	// GemmOwn.
	Gemm device.Gemm
}

// CUDABuilt reports whether this binary contains the CUDA backend (built
// with the cuda tag).
const CUDABuilt = cudaBuilt

// ErrNoCUDA is returned by Open for a cuda device in a binary built without
// the cuda tag.
var ErrNoCUDA = errors.New("this gnnscope was built without CUDA support; build it with the cuda tag " +
	"(go build -tags cuda . on a machine with the CUDA driver and headers, e.g. Debian's nvidia-cuda-dev) to use --device cuda")

// Open returns the device called name (see device.ParseName) and a function
// that releases it once training is over.
func Open(name string, opt Options) (device.Device, func() error, error) {
	kind, ordinal, err := device.ParseName(name)
	if err != nil {
		return nil, nil, err
	}
	if kind == device.KindCUDA {
		return openCUDA(ordinal, opt)
	}
	d := cpu.New(opt.Threads, opt.Budget)
	return d, d.Close, nil
}

// Describe fills the GPU fields of a run_start host description from the
// device (nothing for the CPU device): its name, memory and driver, with
// NVML's driver version where NVML is available.
func Describe(dev device.Device, h *profile.Host) {
	d, ok := device.Unwrap(dev).(device.Describer)
	if !ok {
		return
	}
	info := d.Info()
	if info.Backend != device.KindCUDA {
		return
	}
	h.GPU = info.Name
	h.GPUMem = info.Memory
	h.Driver = info.Driver
	h.Gemm = info.Gemm
	if lib, err := nvml.Open(); err == nil {
		if v, err := lib.DriverVersion(); err == nil {
			h.Driver = v
			if info.Driver != "" {
				h.Driver += " (" + info.Driver + ")"
			}
		}
		lib.Close()
	}
}

// memInfo is implemented by devices that read the driver's memory figures
// (the CUDA device's cuMemGetInfo).
type memInfo interface {
	MemInfo() (free, total int64, err error)
}

// DefaultSamplePeriod is how often SampleGPU reads the GPU.
const DefaultSamplePeriod = 500 * time.Millisecond

// GPUSampler records gpu events while a run trains.
type GPUSampler struct {
	// Source says where the readings come from: "nvml", "cuMemGetInfo",
	// or "" when the device is not a GPU.
	Source string
	// Err says why NVML is not used, if it is not.
	Err    error
	peak   nvml.Peak
	cancel context.CancelFunc
	wg     sync.WaitGroup
	lib    *nvml.Lib
}

// SampleGPU starts recording a gpu event into rec every period (0 = the
// default) for a CUDA device: memory used and total and utilization from
// NVML where it is available, else used and total from the driver's
// cuMemGetInfo with util -1 (not measured). For any other device it
// records nothing. Stop it with Stop.
func SampleGPU(dev device.Device, rec *profile.Recorder, period time.Duration) *GPUSampler {
	s := &GPUSampler{}
	d, ok := device.Unwrap(dev).(device.Describer)
	if !ok || d.Info().Backend != device.KindCUDA || rec == nil {
		return s
	}
	if period <= 0 {
		period = DefaultSamplePeriod
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	emit := func(used, total int64, util float64) {
		rec.Emit(profile.Event{T: profile.TypeGPU, Ts: rec.Now(), Used: used, Total: total, Util: util})
	}
	lib, err := nvml.Open()
	var g *nvml.Device
	if err == nil {
		if g, err = lib.DeviceByUUID(d.Info().UUID); err != nil {
			lib.Close()
		}
	}
	if err == nil {
		s.Source, s.lib = "nvml", lib
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			g.Run(ctx, period, &s.peak, func(_ time.Time, x nvml.Sample) { emit(x.Used, x.Total, x.Util) }, nil)
		}()
		return s
	}
	s.Err = err
	mi, ok := device.Unwrap(dev).(memInfo)
	if !ok {
		return s
	}
	s.Source = "cuMemGetInfo"
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			if free, total, err := mi.MemInfo(); err == nil {
				emit(total-free, total, -1)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns NVML's highest readings: device-wide
// used bytes and this process's bytes (-1 when unknown; both 0 without
// NVML).
func (s *GPUSampler) Stop() (used, process int64) {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
		s.cancel = nil
	}
	if s.lib != nil {
		s.lib.Close()
		s.lib = nil
	}
	u, p, n := s.peak.Used()
	if n == 0 {
		return 0, 0
	}
	return u, p
}

// String describes the sampler's source for logs.
func (s *GPUSampler) String() string {
	switch {
	case s.Source == "":
		return "no GPU sampling"
	case s.Err != nil:
		return fmt.Sprintf("GPU sampling from %s (%v)", s.Source, s.Err)
	}
	return "GPU sampling from " + s.Source
}
