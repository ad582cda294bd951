package devcheck

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// MemoryReport compares the allocator's exact accounting with what the
// driver holds for the process during one allocation pattern.
type MemoryReport struct {
	Pattern       string `json:"pattern"`
	AllocatorPeak int64  `json:"allocator_peak"` // device.Allocator's peak of live tensor bytes
	// PoolReserved is the caching allocator's bytes held from the driver at
	// the peak (rounding and cached blocks included); -1 when the device
	// does not say.
	PoolReserved int64 `json:"pool_reserved"`
	// ProcessBefore and ProcessAtPeak are the device memory NVML attributes
	// to this process before the pattern and at its peak (-1: unknown);
	// their difference is what the pattern cost the driver.
	ProcessBefore int64 `json:"process_before"`
	ProcessAtPeak int64 `json:"process_at_peak"`
	// Books is the device's account at the peak (devices that keep one).
	Books *device.Books `json:"books,omitempty"`
	// OutsideAllocator is what NVML attributes to the process at the peak
	// beyond the allocator's reservation: the context, the loaded kernels,
	// libraries' workspaces (-1: unknown).
	OutsideAllocator int64 `json:"outside_allocator"`
}

// reserver is implemented by devices with a caching allocator.
type reserver interface {
	ReservedBytes() int64
}

// Memory runs an allocation pattern of about total bytes in tensors of
// mixed sizes (allocating, freeing part, allocating again) and reads the
// allocator's peak, the pool's reservation and, through process (may be
// nil), the driver's figure for this process before and at the peak.
func Memory(dev device.Device, total int64, process func() (int64, error)) (MemoryReport, error) {
	rep := MemoryReport{Pattern: fmt.Sprintf("%d MiB in 5 sizes, half freed, then a quarter more", total>>20), PoolReserved: -1, ProcessBefore: -1, ProcessAtPeak: -1, OutsideAllocator: -1}
	read := func() int64 {
		if process == nil {
			return -1
		}
		p, err := process()
		if err != nil {
			return -1
		}
		return p
	}
	dev.Sync()
	bk, hasBooks := device.Unwrap(dev).(device.Bookkeeper)
	if hasBooks {
		// Start from an empty cache: blocks cached by earlier work would
		// otherwise serve the pattern and hide what it costs.
		if err := bk.EmptyCache(); err != nil {
			return rep, fmt.Errorf("devcheck: memory pattern: %w", err)
		}
	}
	rep.ProcessBefore = read()
	dev.Mem().ResetPeak()
	var live []*tensor.Tensor
	defer func() {
		for _, t := range live {
			dev.Free(t)
		}
	}()
	alloc := func(bytes int64) error {
		cols := 256
		rows := int(max(bytes/int64(4*cols), 1))
		t, err := dev.Alloc(rows, cols)
		if err != nil {
			return fmt.Errorf("devcheck: memory pattern: %w", err)
		}
		live = append(live, t)
		return nil
	}
	sizes := []int64{total / 4, total / 8, total / 8, total / 16, total / 16}
	for used := int64(0); used < total/2; {
		for _, s := range sizes {
			if err := alloc(s); err != nil {
				return rep, err
			}
			used += s
		}
	}
	for i := 0; i < len(live); i += 2 {
		dev.Free(live[i])
		live[i] = nil
	}
	live = compact(live)
	for used := int64(0); used < total/4; used += total / 32 {
		if err := alloc(total / 32); err != nil {
			return rep, err
		}
	}
	dev.Sync()
	rep.AllocatorPeak = dev.Mem().Stats().Peak
	if r, ok := device.Unwrap(dev).(reserver); ok {
		rep.PoolReserved = r.ReservedBytes()
	}
	rep.ProcessAtPeak = read()
	if hasBooks {
		b := bk.Books()
		rep.Books = &b
		if rep.ProcessAtPeak >= 0 {
			rep.OutsideAllocator = rep.ProcessAtPeak - b.Reserved
		}
	}
	return rep, nil
}

func compact(ts []*tensor.Tensor) []*tensor.Tensor {
	out := ts[:0]
	for _, t := range ts {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}
