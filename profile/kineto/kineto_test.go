package kineto

import (
	"encoding/json"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// convertFile scans and converts a trace file on its own clock (time 0:
// its earliest event), the stages mapped.
func convertFile(t *testing.T, path string) (*Index, []profile.Event) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Scan(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []profile.Event
	_, err = Convert(r, ix, Options{Origin: ix.Abs(ix.MinTs), Stages: true, Epoch: 1}, func(e *profile.Event) error {
		evs = append(evs, *e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix, evs
}

// spansNamed returns the spans of a name.
func spansNamed(evs []profile.Event, name string) []profile.Event {
	var out []profile.Event
	for _, e := range evs {
		if e.T == profile.TypeSpan && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// TestCPUTrace reads the trace recorded here with torch 1.13 on the CPU:
// operators nested on their thread, steps mapped to batches, the
// DataLoader waits, the optimizer steps and the autograd functions
// mapped to stages.
func TestCPUTrace(t *testing.T) {
	ix, evs := convertFile(t, "testdata/cpu_torch113.json.gz")
	if ix.WallClock() || len(ix.Steps) != 3 {
		t.Fatalf("wall clock %v, steps %+v", ix.WallClock(), ix.Steps)
	}
	train := spansNamed(evs, profile.StageTrain)
	waits := spansNamed(evs, profile.StageWait)
	if len(train) != 3 || len(waits) != 3 || len(spansNamed(evs, profile.StageStep)) != 3 {
		t.Fatalf("%d train, %d wait, %d step spans", len(train), len(waits), len(spansNamed(evs, profile.StageStep)))
	}
	for i, tr := range train {
		w := waits[i]
		if tr.Batch != i+1 || tr.Lane != profile.LaneCompute || w.Batch != i+1 {
			t.Errorf("train %d: %+v, wait %+v", i, tr, w)
		}
		if tr.Start != w.End() { // the step's train starts once its batch is there
			t.Errorf("step %d: train starts at %d, its wait ends at %d", i+1, tr.Start, w.End())
		}
	}
	if len(spansNamed(evs, profile.StageBackward)) != 3*11 {
		t.Errorf("%d backward spans, want 33 (11 autograd functions a step)", len(spansNamed(evs, profile.StageBackward)))
	}
	// nesting: aten::linear holds aten::addmm one level down
	var linear, addmm []profile.Event
	linear, addmm = spansNamed(evs, "aten::linear"), spansNamed(evs, "aten::addmm")
	if len(linear) != 6 || len(addmm) != 6 {
		t.Fatalf("%d linear, %d addmm", len(linear), len(addmm))
	}
	for i := range linear {
		l, a := linear[i], addmm[i]
		dl, _ := attrInt(l.Attrs, "depth")
		da, _ := attrInt(a.Attrs, "depth")
		if a.Start < l.Start || a.End() > l.End() || da != dl+1 || l.Lane != "cpu/1" {
			t.Errorf("addmm %+v not one level inside linear %+v", a, l)
		}
	}
}

// attrInt reads an integer attribute.
func attrInt(raw []byte, key string) (int64, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return 0, false
	}
	v, ok := m[key].(float64)
	return int64(v), ok
}

// TestGPUTraces reads public GPU traces: kernels on their device and
// stream, launches linked to kernels, memory as a series.
func TestGPUTraces(t *testing.T) {
	ix, evs := convertFile(t, "testdata/hta_alexnet.json.gz")
	if !ix.WallClock() || ix.Kernels != 98 || len(ix.Meta.Devices) == 0 {
		t.Fatalf("alexnet: wall %v, %d kernels and copies, devices %+v", ix.WallClock(), ix.Kernels, ix.Meta.Devices)
	}
	links := map[int64][]string{}
	lanes := map[string]bool{}
	for _, e := range evs {
		lanes[e.Lane] = true
		if l, ok := attrInt(e.Attrs, "link"); ok {
			links[l] = append(links[l], e.Lane)
		}
	}
	for _, l := range []string{"gpu0/s7", "gpu0/s20", "cpu/2869224", "runtime/2869224"} {
		if !lanes[l] {
			t.Errorf("alexnet: no lane %s in %v", l, lanes)
		}
	}
	// correlation 5188: cudaLaunchKernel on the main thread, the gemm on stream 20
	if got := links[5188]; len(got) != 2 || got[0] == got[1] {
		t.Errorf("link 5188 on lanes %v", got)
	}
	if testing.Short() {
		t.Skip("the 53 MB trace is read without -short")
	}
	ix, evs = convertFile(t, "testdata/hta_df_index_resolver.json.gz")
	if !ix.HasMem || ix.MemType != 1 || ix.MemID != 1 || len(ix.Steps) != 5 || !ix.Meta.HasRank || ix.Meta.Rank != 1 {
		t.Fatalf("df: mem %v %d/%d, %d steps, rank %+v", ix.HasMem, ix.MemType, ix.MemID, len(ix.Steps), ix.Meta)
	}
	var mem, samples, short int
	for _, e := range evs {
		switch e.T {
		case profile.TypeMem:
			mem++
			if e.Peak < 5e9 || e.Live <= 0 || e.Batch < 2 {
				t.Errorf("mem %+v", e)
			}
		case profile.TypeGPU:
			samples++
			if e.Used <= 0 || e.Total != 34089730048 {
				t.Errorf("sample %+v", e)
			}
		case profile.TypeSpan:
			if l, ok := attrInt(e.Attrs, "launch_ns"); ok && e.Dur < l {
				short++
			}
		}
	}
	if mem != 5 && mem != 6 || samples == 0 || short == 0 {
		t.Errorf("df: %d mem events, %d samples, %d short kernels", mem, samples, short)
	}
}
