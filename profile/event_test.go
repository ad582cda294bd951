package profile

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// allTypes has one event of every type, most with zero-valued numbers that
// must survive the round trip.
func allTypes() []Event {
	return []Event{
		{T: TypeRunStart, V: SchemaVersion, Run: "baseline", Session: "20261122-153045-ab12", Variant: "baseline",
			Config: json.RawMessage(`{"model":"sage","layers":[25,10],"lr":0.003}`),
			Host:   &Host{CPU: "AMD EPYC 7763", Cores: 16, GPU: "NVIDIA H100", Driver: "550.54", GPUMem: 85520809984, Gemm: "cuBLAS 13.1.0 (libcublas.so.13)", Go: "go1.26", OS: "linux/amd64", Hostname: "box", CPUs: 32, Load: 3.25},
			Wall:   "2026-11-22T15:30:45.123456789Z"},
		// one rank of an external distributed run (rank 0 is written as absent)
		{T: TypeRunStart, V: SchemaVersion, Run: "ddp", Variant: "ddp", Rank: 1, World: 2, Node: "gpu-07", NodeRank: 3,
			Config: json.RawMessage(`{"cmd":["python3","train.py"],"external":true,"client":"python"}`),
			Wall:   "2026-11-22T15:30:45.2Z"},
		{T: TypeRunStart, V: SchemaVersion, Run: "ddp", World: 2},
		{T: TypeRunStart, V: SchemaVersion, Run: "optimized", Variant: "optimized",
			Adjusted: []string{"mem_guard split: memory budget 18.3MiB", `a "quoted" one`}},
		{T: TypeRunStart, V: SchemaVersion, Run: "empty", Adjusted: []string{}},
		// a rank on another machine whose start a collector moved onto its clock
		{T: TypeRunStart, V: SchemaVersion, Run: "ddp", Rank: 9, World: 16, Wall: "2026-11-22T15:30:45.1Z",
			Node: "gpu-b", NodeRank: 1, WallLocal: "2026-11-22T15:30:45.35Z",
			Clock: &Clock{Offset: -250000000, Delay: 120000, Samples: 8}},
		{T: TypeRunStart, V: SchemaVersion, Run: "ddp", Node: "gpu-a"},
		{T: TypeClock, Clock: &Clock{}},
		{T: TypeClock, Ts: 5000000000, Clock: &Clock{Offset: 1234, Delay: -5, Samples: 3}},
		{T: TypeSpan, Name: StageSample, Lane: SamplerLane(0)}, // epoch 0, batch 0, start 0, dur 0
		{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Epoch: 3, Batch: 17, Start: 123456789012, Dur: 4567,
			Attrs: json.RawMessage(`{"nodes":1024,"rule":"degree-sum"}`)},
		{T: TypeSpan, Name: StageWait, Lane: LaneCompute, Epoch: -1, Batch: -1, Start: -5, Dur: 0},
		{T: TypeMem, Epoch: 0, Batch: 0, Phase: PhaseTrain},
		{T: TypeMem, Epoch: 2, Batch: 9, Phase: PhaseEval, Peak: 1 << 33, Live: 1 << 30, Budget: 1 << 34, Predicted: 8589934591},
		{T: TypeGPU},
		{T: TypeGPU, Ts: 200000000, Used: 1 << 35, Total: 80 << 30, Util: 0.87},
		{T: TypeOOM, Action: ActionAbort},
		{T: TypeOOM, Epoch: 1, Batch: 44, Requested: 1 << 31, Live: 12345, Budget: 1 << 32, Action: ActionSkip},
		{T: TypeGuard, Action: ActionCut},
		{T: TypeGuard, Epoch: 1, Batch: 44, Predicted: 1 << 31, Actual: 1 << 30, Budget: 1 << 32, Action: ActionSplit},
		{T: TypeStale, Hist: []int64{}},
		{T: TypeStale, Epoch: 4, Batch: 2, Layer: 1, Mean: 2.75, Max: 9, Hist: []int64{10, 0, 5, 3, 1}},
		{T: TypeCache},
		{T: TypeCache, Epoch: 2, Batch: 31, Hits: 9000, Misses: 1000, BytesH2D: 400000},
		{T: TypeHistErr},
		{T: TypeHistErr, Epoch: 5, Layer: 2, RelErr: 1.25e-7},
		{T: TypeMetric, Name: "loss"},
		{T: TypeMetric, Name: "val_acc", Epoch: 7, Batch: -1, Value: 0.7321},
		{T: TypeRunEnd, Status: StatusOK},
		{T: TypeRunEnd, Status: StatusOK, Usage: &Usage{CPUS: 12.5, WaitS: 0.25, WallS: 7, Threads: 2, Load: 1.5}},
		{T: TypeRunEnd, Status: StatusFailed, Error: "open data: no such file\n\"quoted\"",
			Summary: json.RawMessage(`{"wall_s":12.5,"metrics":{"loss":"NaN"}}`)},
		// an unknown type with assorted fields: only non-zero ones are written
		{T: "custom.thing", Name: "x", Epoch: 1, Value: 3, Peak: 7, Hist: []int64{1}},
	}
}

func TestRoundTripEveryType(t *testing.T) {
	for _, in := range allTypes() {
		line := AppendLine(nil, &in)
		if n := strings.Count(string(line), "\n"); n != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("%s: not one line: %q", in.T, line)
		}
		var out Event
		if err := DecodeEvent(line, &out); err != nil {
			t.Fatalf("%s: decode %s: %v", in.T, line, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("%s round trip:\n in  %+v\n out %+v\n line %s", in.T, in, out, line)
		}
		// the line is valid JSON for any other reader too
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("%s: not valid JSON: %v: %s", in.T, err, line)
		}
		// and encoding/json uses the same encoding
		b, err := json.Marshal(in)
		if err != nil || string(b)+"\n" != string(line) {
			t.Errorf("json.Marshal differs: %s %v", b, err)
		}
		var viaJSON Event
		if err := json.Unmarshal(line, &viaJSON); err != nil || !reflect.DeepEqual(in, viaJSON) {
			t.Errorf("json.Unmarshal differs: %+v %v", viaJSON, err)
		}
	}
}

func TestZerosWrittenForTheirType(t *testing.T) {
	cases := map[string]string{
		TypeSpan:    `{"t":"span","name":"sample","lane":"sampler/0","epoch":0,"batch":0,"start":0,"dur":0}`,
		TypeMem:     `{"t":"mem","epoch":0,"batch":0,"phase":"train","peak":0,"live":0,"budget":0,"predicted":0}`,
		TypeMetric:  `{"t":"metric","name":"loss","epoch":0,"batch":0,"value":0}`,
		TypeGPU:     `{"t":"gpu","ts":0,"used":0,"total":0,"util":0}`,
		TypeHistErr: `{"t":"hist_err","epoch":0,"layer":0,"rel_err":0}`,
		TypeClock:   `{"t":"clock","clock":{"offset":0,"delay":0,"samples":0}}`,
	}
	for _, e := range allTypes() {
		want, ok := cases[e.T]
		if !ok {
			continue
		}
		delete(cases, e.T)
		if got := string(AppendEvent(nil, &e)); got != want {
			t.Errorf("%s:\n got  %s\n want %s", e.T, got, want)
		}
	}
}

func TestNonFiniteFloats(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, -0.5, 1e21, 123456789.125} {
		in := Event{T: TypeMetric, Name: "loss", Value: v}
		line := AppendEvent(nil, &in)
		if !json.Valid(line) {
			t.Fatalf("invalid JSON for %v: %s", v, line)
		}
		var out Event
		if err := DecodeEvent(line, &out); err != nil {
			t.Fatal(err)
		}
		if !(out.Value == v || math.IsNaN(v) && math.IsNaN(out.Value)) {
			t.Errorf("%v came back as %v (%s)", v, out.Value, line)
		}
	}
	// what Python's json module writes
	for in, want := range map[string]float64{
		`{"t":"metric","value":NaN}`:       math.NaN(),
		`{"t":"metric","value":Infinity}`:  math.Inf(1),
		`{"t":"metric","value":-Infinity}`: math.Inf(-1),
		`{"t":"metric","value":"+Inf"}`:    math.Inf(1),
		`{"t":"metric","value":1e400}`:     math.Inf(1),
		`{"t":"metric","value":2.5E-3}`:    0.0025,
		`{"t":"metric","value":-0}`:        math.Copysign(0, -1),
	} {
		var e Event
		if err := DecodeEvent([]byte(in), &e); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !(e.Value == want || math.IsNaN(want) && math.IsNaN(e.Value)) || math.Signbit(e.Value) != math.Signbit(want) {
			t.Errorf("%s: got %v want %v", in, e.Value, want)
		}
	}
}

func TestStringEscaping(t *testing.T) {
	strs := []string{
		"plain", "", `quote " and \ backslash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f",
		"ünïcödé ✓ 🚀", "line\u2028sep\u2029", "html <&>", "bad utf8 \xff\xfe end",
	}
	for _, s := range strs {
		in := Event{T: TypeRunEnd, Status: StatusFailed, Error: s}
		line := AppendEvent(nil, &in)
		var viaStd struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &viaStd); err != nil {
			t.Fatalf("%q: invalid JSON %s: %v", s, line, err)
		}
		// encoding/json's reading is the reference (invalid UTF-8 -> U+FFFD)
		ref, _ := json.Marshal(s)
		var want string
		_ = json.Unmarshal(ref, &want)
		if viaStd.Error != want {
			t.Errorf("%q: encoding/json reads %q, want %q", s, viaStd.Error, want)
		}
		var out Event
		if err := DecodeEvent(line, &out); err != nil || out.Error != want {
			t.Errorf("%q: DecodeEvent gives %q, %v; want %q", s, out.Error, err, want)
		}
	}
	// escapes written by other encoders
	var e Event
	if err := DecodeEvent([]byte(`{"t":"span","name":"a\/b\u00e9\ud83d\ude80\ud800x\b\f","lane":"sampler\/3"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Name != "a/bé🚀\ufffdx\b\f" || e.Lane != "sampler/3" {
		t.Errorf("got %q %q", e.Name, e.Lane)
	}
}

func TestRawValuesStayOnOneLine(t *testing.T) {
	in := Event{T: TypeRunStart, Config: json.RawMessage("{\n  \"a\": [1,\n 2]\n}\n")}
	line := AppendEvent(nil, &in)
	if strings.ContainsAny(string(line), "\n\r") {
		t.Fatalf("newline in line: %q", line)
	}
	var out Event
	if err := DecodeEvent(line, &out); err != nil || string(out.Config) != `{"a":[1,2]}` {
		t.Fatalf("config %s, %v", out.Config, err)
	}
	bad := Event{T: TypeSpan, Attrs: json.RawMessage("{not json\n")}
	line = AppendEvent(nil, &bad)
	if !json.Valid(line) {
		t.Fatalf("invalid raw made the line invalid: %s", line)
	}
}

func TestDecodeTolerates(t *testing.T) {
	for _, in := range []string{
		` {"t":"span" , "epoch" : 1 ,"unknown":{"deep":[1,{"x":null}],"s":"}"},"name":"train"}` + "\r\n",
		`{"t":"span","epoch":1.0,"name":"train","start":null,"lane":null,"future":true}`,
		`{"t":"span","epoch":1,"name":"train","hist":null,"host":null,"config":null}`,
		`{"\u0074":"span","epoch":1e0,"name":"train"}`,
	} {
		var e Event
		if err := DecodeEvent([]byte(in), &e); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if e.T != TypeSpan || e.Epoch != 1 || e.Name != StageTrain || e.Lane != "" || e.Start != 0 {
			t.Errorf("%s: got %+v", in, e)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{
		``, `   `, `null`, `[]`, `{}`, `{"epoch":1}`, `{"t":"span"`, `{"t":"span",}`, `{"t":"span"}}`,
		`{"t":"span","epoch":"x"}`, `{"t":"span","epoch":1.5}`, `{"t":"span","epoch":1e30}`,
		`{"t":"span","name":1}`, `{"t":"span","name":"abc`, `{"t":"span","name":"\x"}`,
		`{"t":"span","name":"\u12"}`, `{"t":"span" "name":"a"}`, `{"t":"span","hist":[1,2}`,
		`{"t":"span","attrs":{"a" 1}}`, `{"t":"span","attrs":[1,2`, `{"t":"span","value":tru}`,
		`{"t":"span","x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`,
		`{"t":"span","start":12` /* torn */, `{"t":"spa`,
		`{"t":"run_start","adjusted":[1]}`, `{"t":"run_start","adjusted":["a"`, `{"t":"run_start","adjusted":"a"}`,
		`{"t":"run_start","adjusted":["a",]}`,
		`{"t":"clock","clock":[1]}`, `{"t":"clock","clock":{"offset":"1"}}`, `{"t":"clock","clock":{"delay":1.5}}`,
		`{"t":"clock","clock":{"samples":1`, `{"t":"run_start","node_rank":"1"}`, `{"t":"run_start","node":2}`,
	} {
		var e Event
		err := DecodeEvent([]byte(in), &e)
		if err == nil {
			t.Errorf("%.60s: no error", in)
		} else if !errors.Is(err, ErrSyntax) {
			t.Errorf("%.60s: error %v does not wrap ErrSyntax", in, err)
		}
	}
}

func TestDecodeInternsNames(t *testing.T) {
	line := []byte(`{"t":"span","name":"transfer","lane":"sampler/7","epoch":1,"batch":2,"start":3,"dur":4}`)
	var e Event
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodeEvent(line, &e); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("decoding a span allocates %v times", allocs)
	}
	if e.Lane != "sampler/7" || e.Name != "transfer" {
		t.Errorf("got %+v", e)
	}
	for _, lane := range []string{"sampler/07", "sampler/64", "sampler/999999999999999999999", "sampler/"} {
		if got := intern([]byte(lane)); got != lane {
			t.Errorf("intern(%q) = %q", lane, got)
		}
	}
}

func TestSamplerLane(t *testing.T) {
	if SamplerLane(3) != "sampler/3" || SamplerLane(100) != "sampler/100" || !IsSamplerLane(SamplerLane(12)) || IsSamplerLane(LaneCompute) {
		t.Fatal("sampler lanes")
	}
	if n := testing.AllocsPerRun(10, func() { _ = SamplerLane(5) }); n != 0 {
		t.Errorf("SamplerLane allocates")
	}
}

func TestStaleBucket(t *testing.T) {
	for age, want := range map[int64]int{-1: 0, 0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 7: 3, 8: 4, 1000: 10} {
		if got := StaleBucket(age); got != want {
			t.Errorf("StaleBucket(%d) = %d, want %d", age, got, want)
		}
	}
}

func TestAttrs(t *testing.T) {
	raw := Attrs(Attr{"nodes", 12}, Attr{"rule", "degree-sum"}, Attr{"frac", 0.5}, Attr{"ok", true}, Attr{"ids", []int{1, 2}})
	e := Event{T: TypeSpan, Attrs: raw}
	m, err := e.AttrMap()
	if err != nil {
		t.Fatal(err)
	}
	if m["nodes"] != 12.0 || m["rule"] != "degree-sum" || m["frac"] != 0.5 || m["ok"] != true || len(m["ids"].([]any)) != 2 {
		t.Errorf("attrs %s -> %v", raw, m)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, e := range allTypes() {
		f.Add(AppendEvent(nil, &e))
	}
	f.Add([]byte(`{"t":"metric","value":NaN,"x":[{"y":-Infinity}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		if err := DecodeEvent(b, &e); err != nil {
			return
		}
		// whatever decodes must re-encode to a line that decodes the same
		line := AppendEvent(nil, &e)
		var again Event
		if err := DecodeEvent(line, &again); err != nil {
			t.Fatalf("re-decode %s: %v", line, err)
		}
		if string(AppendEvent(nil, &again)) != string(line) {
			t.Fatalf("not stable: %s", line)
		}
	})
}

func TestStages(t *testing.T) {
	st := Stages()
	seen := map[string]int{}
	for i, s := range st {
		if _, dup := seen[s.Name]; dup || s.Name == "" {
			t.Errorf("stage %d: name %q empty or listed twice", i, s.Name)
		}
		seen[s.Name] = i
	}
	for _, s := range st {
		if s.Parent == "" {
			continue
		}
		if j, ok := seen[s.Parent]; !ok || j >= seen[s.Name] {
			t.Errorf("stage %s: parent %q is not a stage listed before it", s.Name, s.Parent)
		}
	}
	for _, name := range []string{StageSample, StageTransfer, StageTrain, StageForward, StageBackward, StageStep,
		StageEval, StageHistoryPull, StageHistoryPush, StageCache, StageGuard} {
		if _, ok := seen[name]; !ok {
			t.Errorf("design stage %s missing from Stages", name)
		}
	}
	if p := st[3]; p.Name != StageForward || p.Parent != StageTrain {
		t.Errorf("forward: %+v", p)
	}
	names := StageNames()
	if len(names) != len(st) || names[0] != StageSample {
		t.Errorf("StageNames %v", names)
	}
	names[0] = "x"
	if Stages()[0].Name != StageSample {
		t.Error("Stages shares its slice")
	}
}

// TestClockTolerates: a clock object's unknown keys are skipped, its
// integers may be written as integral floats, and null is no clock.
func TestClockTolerates(t *testing.T) {
	var e Event
	if err := DecodeEvent([]byte(`{"t":"clock","ts":5,"clock":{"later":[1,{}],"offset":-2.0,"samples":8,"delay":3e3}}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.T != TypeClock || e.Ts != 5 || e.Clock == nil || *e.Clock != (Clock{Offset: -2, Delay: 3000, Samples: 8}) {
		t.Errorf("got %+v clock %+v", e, e.Clock)
	}
	if err := DecodeEvent([]byte(`{"t":"run_start","clock":null,"node_rank":2}`), &e); err != nil || e.Clock != nil || e.NodeRank != 2 {
		t.Errorf("got %+v, %v", e, err)
	}
}

func TestRankAndWorld(t *testing.T) {
	var e Event
	line := `{"t":"run_start","v":1,"run":"r","rank":3,"world":4,"wall":"2026-11-22T15:30:45Z"}`
	if err := DecodeEvent([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	if e.Rank != 3 || e.World != 4 || !e.Distributed() {
		t.Errorf("rank %d world %d distributed %v", e.Rank, e.World, e.Distributed())
	}
	for _, w := range []int{0, 1} {
		if (&Event{T: TypeRunStart, World: w}).Distributed() {
			t.Errorf("world %d is distributed", w)
		}
	}
	line = `{"t":"run_start","v":1,"run":"r","rank":9,"world":16,"node":"gpu-b","node_rank":1}`
	if err := DecodeEvent([]byte(line), &e); err != nil {
		t.Fatal(err)
	}
	if e.Node != "gpu-b" || e.NodeRank != 1 {
		t.Errorf("node %q node_rank %d", e.Node, e.NodeRank)
	}
	if got := string(AppendEvent(nil, &Event{T: TypeRunStart, V: 1})); strings.Contains(got, "rank") || strings.Contains(got, "world") || strings.Contains(got, "node") {
		t.Errorf("a run that is not distributed writes rank or world: %s", got)
	}
}

// A guard action is never counted as an OOM, also in journals written
// before the guard event, where it was an oom event with the guard's
// action.
func TestKindGuardIsNotOOM(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{T: TypeOOM, Action: ActionAbort}, TypeOOM},
		{Event{T: TypeOOM, Action: ActionSkip}, TypeOOM},
		{Event{T: TypeOOM}, TypeOOM},
		{Event{T: TypeOOM, Action: ActionSplit}, TypeGuard},
		{Event{T: TypeOOM, Action: ActionCut}, TypeGuard},
		{Event{T: TypeOOM, Action: ActionResampled}, TypeGuard},
		{Event{T: TypeGuard, Action: ActionSplit}, TypeGuard},
		{Event{T: TypeSpan, Action: ActionSplit}, TypeSpan},
	} {
		if got := c.e.Kind(); got != c.want {
			t.Errorf("%s/%s: kind %q, want %q", c.e.T, c.e.Action, got, c.want)
		}
	}
	s := Summarize([]Event{{T: TypeOOM, Action: ActionSplit}, {T: TypeGuard, Action: ActionCut}, {T: TypeOOM, Action: ActionSkip}})
	if s.Counts[TypeOOM] != 1 || s.Counts[TypeGuard] != 2 {
		t.Errorf("counts %v: want 1 oom, 2 guard", s.Counts)
	}
}
