package runstate

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestGPUWork: kernels and copies of an imported trace fold into the
// breakdown; a run without them has none.
func TestGPUWork(t *testing.T) {
	r := NewRun("trace")
	r.Add(&profile.Event{T: profile.TypeSpan, Name: "train", Lane: profile.LaneCompute, Batch: 1, Start: 0, Dur: 100})
	if r.GPUWork.Breakdown() != nil {
		t.Fatal("a breakdown without GPU spans")
	}
	r.Add(&profile.Event{T: profile.TypeSpan, Name: "gemm", Lane: "gpu0/s7", Batch: 1, Start: 10, Dur: 40,
		Attrs: profile.Attrs(profile.Attr{Key: "kind", Value: "kernel"})})
	r.Add(&profile.Event{T: profile.TypeSpan, Name: "transfer", Lane: "gpu0/s9", Batch: 1, Start: 30, Dur: 40,
		Attrs: profile.Attrs(profile.Attr{Key: "kind", Value: "memcpy"})})
	b := r.GPUWork.Breakdown()
	if b == nil || b.Total.Window != 100 || b.Total.Compute != 40 || b.Total.Copy != 40 || b.Total.Overlap != 20 || b.Total.Idle != 40 {
		t.Fatalf("breakdown %+v", b)
	}
	if r.GPUWork.Breakdown() != b {
		t.Error("worked out again without a new span")
	}
}
