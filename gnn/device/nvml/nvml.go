package nvml

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// ErrNotAvailable is wrapped by every error that means NVML cannot be used
// on this machine (no library, no driver, no GPU, a build without cgo).
var ErrNotAvailable = errors.New("NVML not available")

// notAvailable returns an error wrapping ErrNotAvailable with the reason.
func notAvailable(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotAvailable, fmt.Sprintf(format, a...))
}

// Sample is one reading of a GPU.
type Sample struct {
	Used  int64   // device memory in use by all processes, bytes
	Total int64   // device memory, bytes
	Util  float64 // fraction of the last sample period a kernel ran (0..1)
	// Process is the device memory NVML attributes to this process (its
	// CUDA context, the caching allocator's reservations and everything
	// else it allocated), or -1 when NVML does not report it.
	Process int64
}

// gpu is what a sampler needs from one device; the NVML implementation is
// in nvml_cgo.go, tests use a fake.
type gpu interface {
	sample(pid int) (Sample, error)
}

// Device is one GPU seen through NVML.
type Device struct {
	lib   *Lib
	g     gpu
	Index int    // NVML index
	Name  string // e.g. "NVIDIA H100 80GB HBM3"
	UUID  string // "GPU-…"
}

// Sample reads the device's memory and utilization now.
func (d *Device) Sample() (Sample, error) { return d.g.sample(os.Getpid()) }

// Peak follows a device's samples and remembers the highest readings.
type Peak struct {
	mu      sync.Mutex
	used    int64
	process int64
	n       int
}

func (p *Peak) add(s Sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.used = max(p.used, s.Used)
	p.process = max(p.process, s.Process)
}

// Used returns the highest device-wide memory in use seen, the highest
// memory of this process (-1 if NVML never reported it) and the number of
// samples.
func (p *Peak) Used() (used, process int64, samples int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return 0, -1, 0
	}
	return p.used, p.process, p.n
}

// Run samples d every period until ctx is done and calls fn with each
// sample (and the time it was taken). A failing read is passed to onErr
// (may be nil) and sampling goes on. Run returns when ctx is done.
func (d *Device) Run(ctx context.Context, period time.Duration, peak *Peak, fn func(time.Time, Sample), onErr func(error)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		now := time.Now()
		s, err := d.g.sample(os.Getpid())
		switch {
		case err != nil:
			if onErr != nil {
				onErr(err)
			}
		default:
			if peak != nil {
				peak.add(s)
			}
			if fn != nil {
				fn(now, s)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
