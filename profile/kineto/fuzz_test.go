package kineto

import (
	"os"
	"testing"
)

// FuzzConvert feeds arbitrary bytes to both passes: an error or events,
// never a panic or a hang.
func FuzzConvert(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[` + x + `]}`))
	f.Add([]byte(`[{"ph":"X","name":"ProfilerStep#1","ts":0,"dur":100},{"ph":"i","name":"[memory]","ts":5,"args":{"Device Type":1,"Total Allocated":7,"Total Reserved":9}}]`))
	f.Add([]byte(`[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":4}},` +
		`{"ph":"s","id":4,"pid":1,"tid":1,"ts":1},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4,"dur":1,"args":{"correlation":4,"stream":7}}]`))
	f.Add([]byte(`{"baseTimeNanoseconds":1,"distributedInfo":{"rank":0,"world_size":2},"deviceProperties":[{"id":0}],"traceEvents":[]}`))
	if b, err := os.ReadFile("testdata/cpu_torch113.json.gz"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, evs, err := convertBytes(data)
		if err != nil {
			return
		}
		for _, e := range evs {
			if e.T == "span" && e.Dur < 0 {
				t.Fatalf("negative duration %+v (index %+v)", e, ix.Meta)
			}
		}
	})
}
