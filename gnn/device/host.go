package device

import "github.com/gnnscope/gnnscope/gnn/tensor"

// HostMemory is implemented by devices whose memory is the host's (the CPU
// backend): a host slice can then be handed to the device's kernels as a
// tensor without a copy.
type HostMemory interface {
	// HostView returns a rows×cols tensor over host (len(host) ==
	// rows*cols), read and written in place by the device's kernels.
	// It is a view: the allocator does not count it and freeing it
	// releases nothing.
	HostView(host []float32, rows, cols int) *tensor.Tensor
}

// AsHostMemory returns the HostMemory device behind dev, if any.
func AsHostMemory(dev Device) (HostMemory, bool) {
	h, ok := Unwrap(dev).(HostMemory)
	return h, ok
}
