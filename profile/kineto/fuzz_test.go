package kineto

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"
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

// FuzzFields checks the plain walk over an event's bytes against
// encoding/json: the same value for every key, on any valid object
// (keys with escapes or invalid UTF-8 aside: the walk keeps them raw).
func FuzzFields(f *testing.F) {
	f.Add([]byte(x))
	f.Add([]byte(`{"ph":"X","args":{"External id":3,"grid":[1,{"a":"]"}]},"name":"a\"b","ts":1.5e3}`))
	f.Add([]byte(` { "ph" : "X" , "ph" : [ ] , "dur" : null } `))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]json.RawMessage
		if !json.Valid(data) || !utf8.Valid(data) || bytes.IndexByte(data, '\\') >= 0 || json.Unmarshal(data, &m) != nil {
			return
		}
		got := map[string]json.RawMessage{}
		if err := eachField(data, func(k, v []byte) { got[string(k)] = v }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(m) {
			t.Fatalf("%d keys, encoding/json %d: %q", len(got), len(m), data)
		}
		for k, v := range m {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("key %q: %q, encoding/json %q", k, got[k], v)
			}
		}
	})
}
