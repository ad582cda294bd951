package device

import "github.com/gnnscope/gnnscope/gnn/tensor"

// Stream names of asynchronous backends (Async.Mark): kernels run in order
// on the compute stream, host-to-device feature copies on the copy stream,
// historical embeddings move on the history stream.
const (
	StreamCompute = "compute"
	StreamCopy    = "copy"
	StreamHistory = "history"
)

// Mark is a timestamp queued on a stream of an Async device. Its fields are
// the device's; the zero Mark is no mark.
type Mark struct {
	Stream string
	ID     uint64
}

// Async is implemented by backends whose kernels and copies run on device
// streams after the call that queued them has returned (the CUDA backend).
// Results that reach the host (CopyToHost into ordinary memory,
// SoftmaxCrossEntropy, Argmax) still wait for the work they depend on, so
// code written for a synchronous Device stays correct; Async only adds a
// way to see when the queued work actually ran.
type Async interface {
	Device
	// SetClock sets the host clock that spans are reported on, in
	// nanoseconds (e.g. profile.Recorder.Now); by default the device's own,
	// counting from its creation.
	SetClock(now func() int64)
	// Mark queues a timestamp on the named stream, after the work queued on
	// it so far.
	Mark(stream string) Mark
	// Span reports, through fn, the host-clock start and duration of the
	// work between two marks of one stream once both have been reached on
	// the device. fn runs later on a goroutine of the device (or during
	// Sync); each mark is used once.
	Span(begin, end Mark, fn func(start, dur int64))
	// GatherHostTimed is GatherHost that also reports, through fn as Span
	// does, when its host-to-device copy ran on the device.
	GatherHostTimed(dst *tensor.Tensor, src []float32, idx []int32, fn func(start, dur int64))
}

// PinnedHost is implemented by backends that can allocate page-locked host
// memory and move data between it and the device asynchronously (GAS
// histories). With memory from AllocPinned, GatherHost and CopyFromHost
// reading it and CopyToHost and ScatterToHost writing it only queue the
// copy, ordered after the work queued before them: host code must Sync the
// device before it reads or writes that memory itself.
type PinnedHost interface {
	// AllocPinned returns n zeroed float32s of page-locked host memory.
	AllocPinned(n int) ([]float32, error)
	// FreePinned releases memory from AllocPinned (after a Sync).
	FreePinned(p []float32)
	// ScatterToHost sets row idx[i] of the host matrix dst (rows of
	// src.Cols values) to row i of src; indices must be distinct.
	ScatterToHost(dst []float32, src *tensor.Tensor, idx []int32)
	// SyncPinned waits for the queued copies and kernels that read or
	// write page-locked memory, and for nothing else (Sync waits for all
	// the device's work).
	SyncPinned()
}

// Info describes the hardware behind a device.
type Info struct {
	Backend Kind   `json:"backend"`          // KindCPU, KindCUDA
	Name    string `json:"name"`             // e.g. "NVIDIA H100 80GB HBM3"
	Memory  int64  `json:"memory,omitempty"` // device memory in bytes
	Driver  string `json:"driver,omitempty"` // driver version
	Compute string `json:"compute,omitempty"`
	UUID    string `json:"uuid,omitempty"`
	Gemm    string `json:"gemm,omitempty"` // the matrix product used, e.g. "cuBLAS 13.1.0 (libcublas.so.13)"
}

// Books is a device's own account of the device memory it holds beyond
// the live tensors that its Allocator counts: what a driver or NVML
// reports for the process is Reserved plus what lies outside the
// allocator (the context, loaded kernels, libraries' workspaces).
type Books struct {
	Reserved   int64 `json:"reserved"`    // held from the driver by the caching allocator
	Allocated  int64 `json:"allocated"`   // of it, in blocks handed out (tensors, scratch, block cache; rounded)
	Cached     int64 `json:"cached"`      // of it, free blocks kept for reuse
	Pending    int64 `json:"pending"`     // of it, freed blocks waiting for side-stream work
	Scratch    int64 `json:"scratch"`     // of Allocated, internal scratch (index uploads, partial sums)
	BlockCache int64 `json:"block_cache"` // of Allocated, device copies of graph blocks
	PinnedHost int64 `json:"pinned_host"` // page-locked host staging memory (not on the device)
}

// Bookkeeper is implemented by devices that keep Books and can return
// their cached memory to the driver.
type Bookkeeper interface {
	Books() Books
	// EmptyCache returns the allocator's free cached memory to the driver.
	EmptyCache() error
}

// Describer is implemented by devices that can describe their hardware.
type Describer interface {
	Info() Info
}

// unwrapper is implemented by views of a device (Scoped).
type unwrapper interface {
	Unwrap() Device
}

// Unwrap returns the device behind views such as Scoped (dev itself if it
// is not a view), so that optional interfaces can be found.
func Unwrap(dev Device) Device {
	for {
		u, ok := dev.(unwrapper)
		if !ok {
			return dev
		}
		dev = u.Unwrap()
	}
}

// AsAsync returns the Async device behind dev, if any.
func AsAsync(dev Device) (Async, bool) {
	a, ok := Unwrap(dev).(Async)
	return a, ok
}

// AsPinnedHost returns the PinnedHost device behind dev, if any.
func AsPinnedHost(dev Device) (PinnedHost, bool) {
	p, ok := Unwrap(dev).(PinnedHost)
	return p, ok
}
