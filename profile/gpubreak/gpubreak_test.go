package gpubreak

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/kineto"
)

// alexnet converts the public A100 trace (Holistic Trace Analysis's
// alexnet benchmark) on its own clock, in µs from its first event.
func alexnet(t *testing.T) []profile.Event {
	t.Helper()
	const path = "../kineto/testdata/hta_alexnet.json.gz"
	r, err := kineto.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := kineto.Scan(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r, err = kineto.Open(path); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []profile.Event
	if _, err := kineto.Convert(r, ix, kineto.Options{}, func(e *profile.Event) error {
		evs = append(evs, *e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

// slice returns the device-side spans of the listed correlation ids.
func slice(t *testing.T, evs []profile.Event, links ...int64) []profile.Event {
	t.Helper()
	var out []profile.Event
	for _, e := range evs {
		if l, ok := attrInt(e.Attrs, "link"); ok && classify(&e) != none {
			for _, want := range links {
				if l == want {
					out = append(out, e)
				}
			}
		}
	}
	if len(out) != len(links) {
		t.Fatalf("found %d spans of %d links", len(out), len(links))
	}
	return out
}

// TestAlexnetSlices checks the breakdown against figures worked out by
// hand from the trace's own events (times in µs as written there).
func TestAlexnetSlices(t *testing.T) {
	evs := alexnet(t)
	const us = 1000
	cases := []struct {
		name  string
		links []int64
		want  Step
		short int
		top   string
	}{{
		// stream 7, one after the other:
		//   5110 computeOffsetsKernel  ts 1695835583881571 dur 4    (launch: cudaLaunchKernel dur 3055567)
		//   5112 scudnn_128x64         ts 1695835583881608 dur 1035 (launch 18)
		//   5117 elementwise_kernel    ts 1695835583882645 dur 187  (launch 20)
		//   5123 vectorized_elementwise ts 1695835583882834 dur 145 (launch 15)
		// window 882979-881571 = 1408; computing 4+1035+187+145 = 1371;
		// idle 37; one kernel (5110) shorter than its launch.
		name: "one stream", links: []int64{5110, 5112, 5117, 5123},
		want:  Step{Batch: -1, Window: 1408 * us, Compute: 1371 * us, Idle: 37 * us, Kernels: 4},
		short: 1, top: "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
	}, {
		// two streams:
		//   5178 s7  fft2d_r2c  ts ...751556 dur 64  -> [751556, 751620]
		//   5181 s20 fft2d_r2c  ts ...751593 dur 63  -> [751593, 751656] (overlaps: union 100)
		//   5188 s20 gcgemm     ts ...755714 dur 323
		//   5190 s20 fft2d_c2r  ts ...756501 dur 144
		//   5213 s7  elementwise ts ...756985 dur 136
		//   5219 s7  vectorized ts ...757123 dur 106 -> ends 757229
		// window 757229-751556 = 5673; computing 100+323+144+136+106 =
		// 809; idle 4864; every launch shorter than its kernel.
		name: "two streams", links: []int64{5178, 5181, 5188, 5190, 5213, 5219},
		want:  Step{Batch: -1, Window: 5673 * us, Compute: 809 * us, Idle: 4864 * us, Kernels: 6},
		short: 0, top: "ampere_gcgemm_64x64_nt",
	}}
	for _, tc := range cases {
		b := NewBuilder()
		for _, e := range slice(t, evs, tc.links...) {
			b.Add(&e)
		}
		got := b.Result(3)
		if got == nil || len(got.Steps) != 1 {
			t.Fatalf("%s: breakdown %+v", tc.name, got)
		}
		total := tc.want
		total.Batch = 0 // the sum has no step of its own
		if got.Steps[0] != tc.want || got.Total != total {
			t.Errorf("%s: step %+v total %+v, want %+v", tc.name, got.Steps[0], got.Total, tc.want)
		}
		if got.Short != tc.short || got.Launched != len(tc.links) || got.Top[0].Name != tc.top {
			t.Errorf("%s: short %d of %d, top %q; want %d of %d, %q", tc.name, got.Short, got.Launched, got.Top[0].Name,
				tc.short, len(tc.links), tc.top)
		}
	}
}

// TestCopyWhileCompute checks the unions on spans that overlap across
// kinds, and the engine's lanes.
func TestCopyWhileCompute(t *testing.T) {
	kernel := profile.Attrs(profile.Attr{Key: "kind", Value: "kernel"})
	memcpy := profile.Attrs(profile.Attr{Key: "kind", Value: "memcpy"})
	memset := profile.Attrs(profile.Attr{Key: "kind", Value: "memset"})
	evs := []profile.Event{
		{T: profile.TypeSpan, Name: "k", Lane: "gpu0/s7", Epoch: 1, Batch: 2, Start: 0, Dur: 100, Attrs: kernel},
		{T: profile.TypeSpan, Name: "c", Lane: "gpu0/s9", Epoch: 1, Batch: 2, Start: 50, Dur: 100, Attrs: memcpy},
		{T: profile.TypeSpan, Name: "m", Lane: "gpu0/s9", Epoch: 1, Batch: 2, Start: 140, Dur: 60, Attrs: memset},
		{T: profile.TypeSpan, Name: "k", Lane: "gpu1/s7", Epoch: 1, Batch: 2, Start: 300, Dur: 10, Attrs: kernel},
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Batch: 2, Start: -20, Dur: 40},
		// the engine's CUDA backend: lanes, no kinds
		{T: profile.TypeSpan, Name: profile.StageGPUTrain, Lane: profile.RankLane(1, profile.LaneGPUCompute), Epoch: 1, Batch: 3, Start: 1000, Dur: 30},
		{T: profile.TypeSpan, Name: profile.StageGPUTransfer, Lane: profile.LaneGPUCopy, Epoch: 1, Batch: 3, Start: 1020, Dur: 30},
		{T: profile.TypeSpan, Name: "aten::mm", Lane: "cpu/1", Epoch: 1, Batch: 3, Start: 0, Dur: 5000},
	}
	b := NewBuilder()
	for i := range evs {
		b.Add(&evs[i])
	}
	got := b.Result(5)
	// batch 2: window [-20, 310) = 330; compute [0,100) + [300,310) = 110;
	// copy [50,200) = 150; both [50,100) = 50; busy 210; idle 120
	want := []Step{
		{Epoch: 1, Batch: 2, Window: 330, Compute: 110, Copy: 150, Overlap: 50, Idle: 120, Kernels: 2, Copies: 2},
		{Epoch: 1, Batch: 3, Window: 50, Compute: 30, Copy: 30, Overlap: 10, Idle: 0, Kernels: 1, Copies: 1},
	}
	if got == nil || len(got.Steps) != 2 || got.Steps[0] != want[0] || got.Steps[1] != want[1] {
		t.Fatalf("steps %+v, want %+v", got, want)
	}
	if got.Total.Window != 380 || got.Total.Idle != 120 || got.Top[0].Name != "k" || got.Top[0].Count != 2 || got.Launched != 0 {
		t.Errorf("total %+v top %+v", got.Total, got.Top)
	}
	if NewBuilder().Result(3) != nil {
		t.Error("a run without GPU spans has a breakdown")
	}
}

// TestResultAgain: a second Result, after more events, counts every
// span once.
func TestResultAgain(t *testing.T) {
	kernel := profile.Attrs(profile.Attr{Key: "kind", Value: "kernel"})
	b := NewBuilder()
	add := func(start, dur int64) {
		e := profile.Event{T: profile.TypeSpan, Name: "k", Lane: "gpu0/s7", Start: start, Dur: dur, Attrs: kernel}
		b.Add(&e)
	}
	add(0, 10)
	add(5, 10)
	if got := b.Result(1); got.Total.Compute != 15 || got.Total.Kernels != 2 {
		t.Fatalf("first %+v", got.Total)
	}
	add(20, 5)
	if got := b.Result(1); got.Total.Compute != 20 || got.Total.Kernels != 3 || got.Total.Window != 25 || got.Top[0].Count != 3 {
		t.Errorf("second %+v", got.Total)
	}
}
