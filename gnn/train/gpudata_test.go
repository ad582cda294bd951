package train

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// fakeGPU is the CPU device dressed as a CUDA device of mem bytes: its
// pinned memory is ordinary memory, and it samples with the reference of
// the GPU sampler's kernel (sample.DrawHop), so that the feature stores
// and the GPU sampler's wiring run without a GPU.
type fakeGPU struct {
	*cpu.Device
	mem            int64
	pinned, drawer int // live pinned allocations and drawers
}

func (f *fakeGPU) Info() device.Info {
	return device.Info{Backend: device.KindCUDA, Name: "fake", Memory: f.mem}
}
func (f *fakeGPU) AllocPinned(n int) ([]float32, error) { f.pinned++; return make([]float32, n), nil }
func (f *fakeGPU) FreePinned(p []float32)               { f.pinned-- }
func (f *fakeGPU) SyncPinned()                          {}
func (f *fakeGPU) ScatterToHost(dst []float32, src *tensor.Tensor, idx []int32) {
	for i, r := range idx {
		copy(dst[int(r)*src.Cols:(int(r)+1)*src.Cols], src.Data[i*src.Cols:(i+1)*src.Cols])
	}
}
func (f *fakeGPU) NeighborDrawer(g *graph.CSR) (device.NeighborDrawer, error) {
	f.drawer++
	return &fakeDrawer{CPUDrawer: sample.CPUDrawer{G: g}, f: f}, nil
}

type fakeDrawer struct {
	sample.CPUDrawer
	f *fakeGPU
}

func (d *fakeDrawer) Where() device.Place { return device.PlaceDevice }
func (d *fakeDrawer) Close() error        { d.f.drawer--; return nil }

// TestGPUDataValidation: the feature store and the sampler's device are
// checked, and asking a CPU device for GPU placements is a clear error.
func TestGPUDataValidation(t *testing.T) {
	for _, c := range []struct {
		store   device.Place
		sampler device.Kind
		dev     string
		s       Sampler
		want    string // "" = valid
	}{
		{"", "", "cpu", SamplerNeighbor, ""},
		{"host", "cpu", "cpu", SamplerNeighbor, ""},
		{"uva", "", "cuda", SamplerNeighbor, ""},
		{"device", "cuda", "cuda:1", SamplerNeighbor, ""},
		{"uva", "", "cpu", SamplerNeighbor, "feature store uva keeps the features for a GPU: it needs --device cuda"},
		{"device", "", "cpu", SamplerFull, "feature store device keeps"},
		{"gpu", "", "cuda", SamplerNeighbor, `feature store "gpu" is not one of device, uva, host`},
		{"", "cuda", "cpu", SamplerNeighbor, "sampler device cuda samples with a GPU kernel: it needs --device cuda"},
		{"", "cuda", "cuda", SamplerFull, "it needs --sampler neighbor"},
		{"", "tpu", "cuda", SamplerNeighbor, `sampler device "tpu" is not one of cpu, cuda`},
	} {
		cfg := Defaults("sage")
		cfg.Sampler, cfg.Fanouts = c.s, []int{5, 5}
		cfg.FeatureStore, cfg.SamplerDevice, cfg.Device = c.store, c.sampler, c.dev
		err := cfg.Validate()
		if c.want == "" && err != nil {
			t.Errorf("%+v: %v", c, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: error %v, want %q", c, err, c.want)
		}
	}
}

// runGPU trains cfg on a fakeGPU of mem bytes and returns the result, the
// plan lines and the recorded events.
func runGPU(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split, mem int64) (*Result, []string, []profile.Event) {
	t.Helper()
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	rec.RunStart("r", "s", "v", nil, &profile.Host{Cores: 2})
	dev := &fakeGPU{Device: cpu.New(2, 0), mem: mem}
	cfg.Device = "cuda"
	var plan []string
	res, err := Run(context.Background(), cfg, ds, split, dev, Options{Recorder: rec, OnStart: func(p []string) { plan = p }})
	if cerr := rec.Close("", err, nil); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if live := dev.Mem().Stats().Live; live != 0 || dev.pinned != 0 || dev.drawer != 0 {
		t.Fatalf("after the run: %d bytes live, %d pinned allocations, %d drawers", live, dev.pinned, dev.drawer)
	}
	return res, plan, sink.evs
}

// TestFeatureStores trains with the features in device memory, in
// (fake) mapped pinned memory and on the host: the batches and so the
// losses are the same; the automatic choice follows the room and the plan
// records it.
func TestFeatureStores(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 5)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 30, 100, 200, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults("sage")
	cfg.Epochs, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = 2, 16, 32, []int{5, 3}
	want, _ := runRecorded(t, cfg, ds, split)
	for _, c := range []struct {
		store string
		mem   int64
		line  string
	}{
		{"device", 1 << 30, "features: device (18.8KiB matrix; asked for)"},
		{"uva", 1 << 30, "features: uva (18.8KiB matrix; asked for)"},
		{"host", 1 << 30, "features: host"},
		{"", 1 << 30, "features: device (18.8KiB matrix; chosen: at most half"},
		{"", 30 << 10, "features: uva (18.8KiB matrix; chosen: more than half"},
		{"uva,cache", 1 << 30, "features: uva (18.8KiB matrix; asked for)"},
		{"device,cache", 1 << 30, "features: device (18.8KiB matrix; asked for)"},
	} {
		cfg := cfg
		cfg.FeatureStore = device.Place(c.store)
		if store, ok := strings.CutSuffix(c.store, ",cache"); ok {
			cfg.FeatureStore, cfg.CacheBytes = device.Place(store), "20%"
		}
		got, plan, _ := runGPU(t, cfg, ds, split, c.mem)
		if len(plan) == 0 || !strings.HasPrefix(plan[0], c.line) {
			t.Errorf("store %q, memory %d: plan %q, want a line %q", c.store, c.mem, plan, c.line)
		}
		if cfg.CacheBytes != "" {
			cached := cfg.FeatureStore != "device"
			if got.Cache != nil != cached || !strings.Contains(strings.Join(plan, "\n"), "feature cache") {
				t.Errorf("store %q: cache report %v, plan %q", c.store, got.Cache, plan)
			}
		}
		if c.mem < 1<<20 {
			continue // inference sized to the small device cuts edges: other accuracies
		}
		for e := range want.History {
			if got.History[e].Loss != want.History[e].Loss {
				t.Fatalf("store %q: epoch %d loss %v, on the host %v", c.store, e+1, got.History[e].Loss, want.History[e].Loss)
			}
		}
	}
}

// TestGPUSampler trains with hops drawn by the (fake) GPU sampler: the
// sample spans run on the gpu/sampler lane with the sampled edges and
// their rate, the plan says where sampling runs, and the sampler's graph
// is released at the end.
func TestGPUSampler(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 6)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 30, 100, 200, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults("sage")
	cfg.Epochs, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = 2, 16, 32, []int{5, 3}
	cfg.SamplerDevice, cfg.SamplerWorkers = device.KindCUDA, 2
	res, plan, evs := runGPU(t, cfg, ds, split, 1<<30)
	if res.History[len(res.History)-1].Loss <= 0 {
		t.Fatalf("loss %v", res.History[len(res.History)-1].Loss)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "sampler: cuda kernel, graph in device memory, spans on lane gpu/sampler") {
		t.Errorf("plan %q does not say where sampling runs", plan)
	}
	n := 0
	for _, e := range evs {
		if e.T != profile.TypeSpan || e.Name != profile.StageSample {
			continue
		}
		n++
		if e.Lane != profile.LaneGPUSampler {
			t.Fatalf("sample span on lane %q, want %q", e.Lane, profile.LaneGPUSampler)
		}
		var a struct {
			Edges     int64   `json:"edges"`
			EdgesPerS float64 `json:"edges_per_s"`
		}
		if err := json.Unmarshal(e.Attrs, &a); err != nil || a.Edges <= 0 || a.EdgesPerS <= 0 {
			t.Fatalf("sample span attrs %s: %+v, %v", e.Attrs, a, err)
		}
	}
	if n == 0 {
		t.Fatal("no sample spans")
	}
}

// TestHoldResident: features kept in device memory are held beside the
// model, once, and the memory gate of a guarded, overlapped run shrinks
// by them, not by a snapshot of them (the snapshot is of the weights).
func TestHoldResident(t *testing.T) {
	dev := cpu.New(1, 0)
	x, err := dev.Alloc(100, 10) // 4000 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(x)
	g := &gpuData{xDev: x}
	cfg := Config{OverlapEval: true}
	m := &memState{budget: 10000, resident: 800, gate: memory.NewGate(9000)}
	if err := g.holdResident(m, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if m.held() != 4800 || m.gate.Capacity() != 10000-800-200-4000 {
		t.Fatalf("held %d, gate %d", m.held(), m.gate.Capacity())
	}
	if err := g.holdResident(m, cfg, nil); err != nil || m.held() != 4800 {
		t.Fatalf("counted twice: held %d, %v", m.held(), err)
	}
	m = &memState{budget: 5000, resident: 800, gate: memory.NewGate(4000)}
	if err := (&gpuData{xDev: x}).holdResident(m, cfg, nil); err == nil || !strings.Contains(err.Error(), "leaves no room") {
		t.Fatalf("error %v", err)
	}
	if err := (&gpuData{}).holdResident(m, cfg, nil); err != nil {
		t.Fatal(err)
	}
}
