package train

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// Device-side timing. On an asynchronous device (the CUDA backend) the
// host-side spans measure when work was queued; the device's event
// timeline (device.Async) adds, on the gpu/compute and gpu/copy lanes,
// when that work actually ran: each training step's kernels (gpu.train)
// and each batch's feature copy (gpu.transfer). On the CPU device nothing
// changes.

// deviceClock points an asynchronous device's spans at the recorder's
// clock.
func (t *trainer) deviceClock() {
	if a, ok := device.AsAsync(t.dev); ok && t.rec != nil {
		a.SetClock(t.rec.Now)
	}
}

// gatherFeatures sets dst's rows to the features of nodes (GatherHost),
// recording when the copy ran on an asynchronous device.
func (t *trainer) gatherFeatures(dst *tensor.Tensor, nodes []int32, epoch, batch int) {
	if a, ok := device.AsAsync(t.dev); ok && t.rec != nil {
		rec := t.rec
		a.GatherHostTimed(dst, t.x, nodes, func(start, dur int64) {
			rec.Span(profile.StageGPUTransfer, profile.LaneGPUCopy, epoch, batch, start, dur)
		})
		return
	}
	t.dev.GatherHost(dst, t.x, nodes)
}

// gpuSpan marks dev's compute stream and returns a function that marks it
// again and records the work queued in between as a span called name,
// once the device has run it. It does nothing on a synchronous device.
func (t *trainer) gpuSpan(dev device.Device, name string, epoch, batch int) func() {
	a, ok := device.AsAsync(dev)
	if !ok || t.rec == nil {
		return func() {}
	}
	rec := t.rec
	begin := a.Mark(device.StreamCompute)
	return func() {
		a.Span(begin, a.Mark(device.StreamCompute), func(start, dur int64) {
			rec.Span(name, profile.LaneGPUCompute, epoch, batch, start, dur)
		})
	}
}

// closeHistories releases the GAS histories (pinned device memory on the
// CUDA backend).
func (t *trainer) closeHistories() {
	if t.gas == nil {
		return
	}
	for _, h := range t.gas.hist {
		h.Close()
	}
}
