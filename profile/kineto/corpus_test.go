package kineto

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// convertBytes runs both passes over a trace held in memory.
func convertBytes(data []byte) (*Index, []profile.Event, error) {
	ix, err := Scan(NewReader("t.json", bytes.NewReader(data)))
	if err != nil {
		return nil, nil, err
	}
	var evs []profile.Event
	_, err = Convert(NewReader("t.json", bytes.NewReader(data)), ix, Options{Origin: ix.Abs(ix.MinTs), Stages: true},
		func(e *profile.Event) error {
			evs = append(evs, *e)
			return nil
		})
	return ix, evs, err
}

const x = `{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":10,"dur":5}`

// TestMalformed runs the importer on damaged and odd traces: each gives
// a clear error (naming the file, the byte and the event) or a correct
// conversion, never a crash.
func TestMalformed(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []struct {
		name, trace string
		err         string                               // a part of the error; "" for none
		check       func(*Index, []profile.Event) string // "" when right
	}{
		{"empty", ``, "not a trace", nil},
		{"null", `null`, "not a trace", nil},
		{"number", `12`, "not a trace", nil},
		{"open array", `[`, "truncated", nil},
		{"open events", `{"traceEvents": [`, "truncated", nil},
		{"cut in an event", `{"traceEvents": [` + x + `, {"ph":"X","na`, "byte ", nil},
		{"cut after an event", `{"traceEvents": [` + x, "truncated", nil},
		{"no closing brace", `{"traceEvents": [` + x + `]`, "truncated", nil},
		{"events an object", `{"traceEvents": {}}`, "not an array", nil},
		{"events a number", `{"traceEvents": 3}`, "not an array", nil},
		{"ts a bool", `[{"ph":"X","name":"a","ts":true,"dur":1}]`, "event 0: ts true", nil},
		{"ts an object", `[` + x + `,{"ph":"X","name":"a","ts":{"a":1},"dur":1}]`, "event 1: ts", nil},
		{"ts huge", `[{"ph":"X","name":"a","ts":1e300,"dur":1}]`, "ts 1e300", nil},
		{"ts past int64", `[{"ph":"X","name":"a","ts":99999999999999999999,"dur":1}]`, "ts 9999", nil},
		{"dur negative", `[{"ph":"X","name":"a","ts":1,"dur":-4}]`, "dur -4", nil},
		{"dur huge", `[{"ph":"X","name":"a","ts":1,"dur":"1e200"}]`, "dur", nil},
		{"base huge", `{"baseTimeNanoseconds":9223372036854775807,"traceEvents":[` + x + `]}`, "baseTimeNanoseconds", nil},
		{"base not a number", `{"traceEvents":[` + x + `],"baseTimeNanoseconds":"soon"}`, "baseTimeNanoseconds", nil},
		{"nested too deep in an unknown key", `{"other":` + deep + `,"traceEvents":[]}`, "nested too deeply", nil},
		{"nested too deep in args", `[{"ph":"X","name":"a","ts":1,"dur":1,"args":{"x":` + deep + `}}]`, "event 0", nil},
		{"quoted times and ids", `[{"ph":"X","cat":"cpu_op","name":"a","pid":"p","tid":"main thread","ts":"7.25","dur":"1.5"}]`, "",
			func(_ *Index, evs []profile.Event) string {
				if len(evs) != 1 || evs[0].Lane != "cpu/main_thread" || evs[0].Dur != 1500 {
					return fmt.Sprint(evs)
				}
				return ""
			}},
		// ts 1.0005 µs is 1000 ns (digits past the ns are dropped)
		{"fractional ns and a late base", `{"traceEvents":[{"ph":"X","name":"a","ts":1.0005,"dur":0.0015},` +
			`{"ph":"X","name":"b","ts":3,"dur":1}],"baseTimeNanoseconds":1700000000000000000}`, "",
			func(ix *Index, evs []profile.Event) string {
				if !ix.WallClock() || len(evs) != 2 || evs[0].Dur != 1 || evs[1].Start != 2000 {
					return fmt.Sprint(ix.Meta, evs)
				}
				return ""
			}},
		{"wrong types left out", `{"distributedInfo":[1],"deviceProperties":"x","traceEvents":[7,"s",null,` +
			`{"ph":"X","name":"a","ts":1,"dur":1,"args":[1,2]},{"ph":["X"],"name":{"a":1}}]}`, "",
			func(ix *Index, evs []profile.Event) string {
				if ix.Meta.HasRank || len(evs) != 1 || evs[0].Name != "a" {
					return fmt.Sprint(ix.Meta, evs)
				}
				return ""
			}},
		{"cycles of flows", `[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2},` +
			`{"ph":"s","id":9,"pid":1,"tid":1,"ts":1},{"ph":"f","id":9,"pid":0,"tid":7,"ts":4,"bp":"e"},` +
			`{"ph":"s","id":9,"pid":0,"tid":7,"ts":4},{"ph":"f","id":9,"pid":1,"tid":1,"ts":1},` +
			`{"ph":"t","id":9,"pid":1,"tid":1,"ts":1},` +
			`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4,"dur":1}]`, "",
			func(_ *Index, evs []profile.Event) string {
				if len(evs) != 2 || !bytes.Contains(evs[0].Attrs, []byte(`"link":9`)) || !bytes.Contains(evs[1].Attrs, []byte(`"link":9`)) ||
					evs[1].Lane != "gpu0/s7" {
					return fmt.Sprint(evs)
				}
				return ""
			}},
		{"flow ids as text", `[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2},` +
			`{"ph":"s","id":"0x1f","pid":1,"tid":1,"ts":1},{"ph":"f","id":"0x1f","pid":0,"tid":7,"ts":4,"bp":"e"},` +
			`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4,"dur":1}]`, "",
			func(_ *Index, evs []profile.Event) string {
				a, _ := attrInt(evs[0].Attrs, "link")
				b, _ := attrInt(evs[1].Attrs, "link")
				if len(evs) != 2 || a != b || a == 0 {
					return fmt.Sprint(evs)
				}
				return ""
			}},
		{"no times", `[{"ph":"X","name":"a"},{"ph":"i","name":"[memory]","args":{"Total Allocated":"x"}}]`, "",
			func(_ *Index, evs []profile.Event) string {
				if len(evs) != 1 || evs[0].Dur != 0 {
					return fmt.Sprint(evs)
				}
				return ""
			}},
		{"events twice", `{"traceEvents":[` + x + `],"traceEvents":[` + x + `]}`, "",
			func(_ *Index, evs []profile.Event) string {
				return map[bool]string{false: fmt.Sprint(evs)}[len(evs) == 2]
			}},
		{"garbage after the trace", `{"traceEvents":[` + x + `]} trailing`, "",
			func(_ *Index, evs []profile.Event) string {
				return map[bool]string{false: fmt.Sprint(evs)}[len(evs) == 1]
			}},
		{"steps that overlap and repeat", `[{"ph":"X","name":"ProfilerStep#3","ts":0,"dur":100},{"ph":"X","name":"ProfilerStep#3","ts":50,"dur":100},` +
			`{"ph":"X","name":"ProfilerStep#x","ts":0,"dur":1},{"ph":"X","name":"op","ts":60,"dur":1}]`, "",
			func(_ *Index, evs []profile.Event) string {
				if n := len(spansNamed(evs, profile.StageTrain)); n != 2 || evs[len(evs)-1].Batch != 3 {
					return fmt.Sprint(evs)
				}
				return ""
			}},
		{"memory of two devices", `[{"ph":"X","name":"ProfilerStep#1","ts":0,"dur":100},` +
			`{"ph":"i","name":"[memory]","ts":5,"args":{"Device Type":0,"Device Id":-1,"Total Allocated":7,"Total Reserved":0}},` +
			`{"ph":"i","name":"[memory]","ts":6,"args":{"Device Type":1,"Device Id":0,"Total Allocated":300,"Total Reserved":512}},` +
			`{"ph":"i","name":"[memory]","ts":7,"args":{"Device Type":1,"Device Id":0,"Total Allocated":100,"Total Reserved":512}}]`, "",
			func(_ *Index, evs []profile.Event) string {
				var mem, gpu []profile.Event
				for _, e := range evs {
					switch e.T {
					case profile.TypeMem:
						mem = append(mem, e)
					case profile.TypeGPU:
						gpu = append(gpu, e)
					}
				}
				if len(mem) != 1 || mem[0].Peak != 300 || mem[0].Live != 100 || mem[0].Batch != 1 || len(gpu) != 1 || gpu[0].Used != 512 {
					return fmt.Sprint(mem, gpu)
				}
				return ""
			}},
		{"missing External id: linked by containment", `[{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":100},` +
			`{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":10,"dur":40},` +
			`{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":1,"ts":200,"dur":10},` +
			`{"ph":"X","cat":"cuda_runtime","name":"R","pid":1,"tid":1,"ts":20,"dur":5},` +
			`{"ph":"X","cat":"cuda_runtime","name":"R2","pid":1,"tid":1,"ts":70,"dur":5},` +
			`{"ph":"X","cat":"cuda_runtime","name":"R3","pid":1,"tid":2,"ts":20,"dur":5}]`, "",
			func(_ *Index, evs []profile.Event) string {
				ext := map[string]int64{}
				for _, e := range evs {
					if v, ok := attrInt(e.Attrs, "ext"); ok {
						ext[e.Name] = v
					}
				}
				_, c := ext["C"]
				_, r3 := ext["R3"]
				if ext["R"] != ext["B"] || ext["R2"] != ext["A"] || ext["A"] == ext["B"] || ext["A"] >= 0 || c || r3 {
					return fmt.Sprint(ext)
				}
				return ""
			}},
		{"steps annotated on the GPU too", `[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":0,"dur":100},` +
			`{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#2","pid":0,"tid":7,"ts":50,"dur":100,"args":{"device":0}}]`, "",
			func(ix *Index, evs []profile.Event) string {
				if len(ix.Steps) != 1 || len(spansNamed(evs, profile.StageTrain)) != 1 || evs[len(evs)-1].Lane != "gpu0/annot" {
					return fmt.Sprint(ix.Steps, evs)
				}
				return ""
			}},
		{"a bare array of one", `[` + x + `]`, "",
			func(_ *Index, evs []profile.Event) string {
				return map[bool]string{false: fmt.Sprint(evs)}[len(evs) == 1]
			}},
	}
	if len(cases) < 30 {
		t.Fatalf("%d cases; the corpus has 30", len(cases))
	}
	for _, tc := range cases {
		ix, evs, err := convertBytes([]byte(tc.trace))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "trace t.json: byte ") {
				t.Errorf("%s: error %v, want one naming the file, the byte and %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		default:
			if msg := tc.check(ix, evs); msg != "" {
				t.Errorf("%s: %s", tc.name, msg)
			}
		}
	}
}

// events writes n events on one thread, each holding the next (a chain
// as deep as the trace is long), without holding the trace.
type events struct {
	n, i int
	buf  []byte
}

func (g *events) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i <= g.n {
		switch {
		case g.i == 0:
			g.buf = append(g.buf, `{"traceEvents":[`...)
		case g.i == g.n:
			g.buf = append(g.buf, `]}`...)
		default:
			if g.i > 1 {
				g.buf = append(g.buf, ',')
			}
			g.buf = fmt.Appendf(g.buf, `{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":%d}`, g.i%7, g.i, 2*g.n-g.i)
		}
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[k:])]
	return k, nil
}

// TestMillionEvents converts 10^6 nested events of one thread with the
// heap bounded: nothing of the trace is held but the index and one event.
func TestMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("10^6 events take a while; run without -short")
	}
	const n = 1_000_000
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	ix, err := Scan(NewReader("million", &events{n: n}))
	if err != nil {
		t.Fatal(err)
	}
	spans := 0
	_, err = Convert(NewReader("million", &events{n: n}), ix, Options{Origin: ix.MinTs, Stages: true}, func(e *profile.Event) error {
		spans++
		if spans%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	if err != nil || spans != n-1 {
		t.Fatalf("%d spans, %v", spans, err)
	}
	// the trace is ~80 MB of JSON; the conversion holds a few MB
	grown := int64(peak) - int64(base)
	if grown > 64<<20 {
		t.Errorf("heap grew by %d MB converting 10^6 events", grown>>20)
	}
	t.Logf("heap grew by at most %.1f MB over 10^6 events", float64(grown)/(1<<20))
}

// TestTruncatedGzip: a compressed trace cut short names its file.
func TestTruncatedGzip(t *testing.T) {
	b, err := os.ReadFile("testdata/cpu_torch113.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.json.gz")
	if err := os.WriteFile(p, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = Scan(r)
	if err == nil || !strings.Contains(err.Error(), "trace "+p+": byte ") || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("cut gzip: %v", err)
	}
}
