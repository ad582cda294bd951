package kineto

import (
	"slices"
	"strconv"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestLegacyMemory reads a trace as torch without Kineto writes it (a
// bare array, times from 0, pid "CPU functions") with the [memory]
// events the Python client appends to it: CPU records, no Total
// Reserved. They make the memory series as a Kineto trace's would: per
// step the peak and the last Total Allocated; no gpu samples (the CPU
// has none); a record outside every step has batch -1.
func TestLegacyMemory(t *testing.T) {
	mem := func(ts, bytes, total int) string {
		return `{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": "CPU functions", "tid": 1, "ts": ` +
			strconv.Itoa(ts) + `, "args": {"Device Type": 0, "Device Id": -1, "Bytes": ` + strconv.Itoa(bytes) + `, "Total Allocated": ` + strconv.Itoa(total) +
			`, "gnnscope": "running sum of the window's allocations and frees, from its lowest point"}}`
	}
	trace := `[{"name": "ProfilerStep#4", "ph": "X", "ts": 10, "dur": 40, "tid": 1, "pid": "CPU functions", "args": {}}, ` +
		`{"name": "aten::mm", "ph": "X", "ts": 12, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}, ` +
		`{"name": "ProfilerStep#5", "ph": "X", "ts": 50, "dur": 40, "tid": 1, "pid": "CPU functions", "args": {}}, ` +
		mem(5, 4, 4) + ", " + mem(13, 4096, 4100) + ", " + mem(20, -4096, 4) + ", " + mem(60, 512, 516) + ", " + mem(70, 1024, 1540) + ", " + mem(80, -1536, 4) + "]"
	ix, evs, err := convertBytes([]byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	if !ix.HasMem || ix.MemType != 0 || ix.MemID != -1 {
		t.Fatalf("memory device: %v, type %d, id %d", ix.HasMem, ix.MemType, ix.MemID)
	}
	type pl struct {
		batch      int
		peak, live int64
	}
	var got []pl
	for _, e := range evs {
		switch e.T {
		case profile.TypeMem:
			got = append(got, pl{e.Batch, e.Peak, e.Live})
		case profile.TypeGPU:
			t.Errorf("gpu sample %+v from CPU memory", e)
		}
	}
	want := []pl{{-1, 4, 4}, {4, 4100, 4}, {5, 1540, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("mem events %v, want %v", got, want)
	}
}
