package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// traceEvent is one decoded Chrome trace event.
type traceEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	S    string          `json:"s"`
	Args json.RawMessage `json:"args"`
}

func (e traceEvent) startNs() int64 { return int64(math.Round(e.Ts * 1000)) }
func (e traceEvent) endNs() int64   { return int64(math.Round((e.Ts + e.Dur) * 1000)) }

type spanArgs struct {
	Epoch int             `json:"epoch"`
	Batch int             `json:"batch"`
	Attrs json.RawMessage `json:"attrs"`
}

// decodeTrace parses a trace strictly: one JSON object with traceEvents.
func decodeTrace(t *testing.T, b []byte) []traceEvent {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("not valid JSON:\n%s", b)
	}
	var doc struct {
		TraceEvents     []traceEvent `json:"traceEvents"`
		DisplayTimeUnit string       `json:"displayTimeUnit"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.TraceEvents
}

// traceRunEvents is a small pipelined run: train spans with children on
// compute, an evaluation on compute that partially overlaps them, sampling
// and transfer on two sampler lanes, and every kind of sample.
func traceRunEvents(run string) []Event {
	evs := []Event{{T: TypeRunStart, V: 1, Run: run, Session: "s1", Variant: "optimized", Host: &Host{Cores: 2}}}
	const ms = int64(1_000_000)
	for b := range 6 {
		at := int64(b) * 10 * ms
		lane := SamplerLane(b % 2)
		evs = append(evs,
			Event{T: TypeSpan, Name: StageSample, Lane: lane, Epoch: 1, Batch: b, Start: at, Dur: 6*ms + 7, Attrs: Attrs(Attr{Key: "nodes", Value: 100 + b})},
			Event{T: TypeSpan, Name: StageTransfer, Lane: lane, Epoch: 1, Batch: b, Start: at + 6*ms + 7, Dur: 2 * ms},
			Event{T: TypeSpan, Name: StageForward, Lane: LaneCompute, Epoch: 1, Batch: b, Start: at + 9*ms, Dur: 3 * ms},
			Event{T: TypeSpan, Name: StageBackward, Lane: LaneCompute, Epoch: 1, Batch: b, Start: at + 12*ms, Dur: 4 * ms},
			Event{T: TypeSpan, Name: StageStep, Lane: LaneCompute, Epoch: 1, Batch: b, Start: at + 16*ms, Dur: 1 * ms},
			Event{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Epoch: 1, Batch: b, Start: at + 9*ms, Dur: 8 * ms},
			Event{T: TypeMetric, Name: "batch_loss", Epoch: 1, Batch: b, Value: 1 / float64(b+1)},
			Event{T: TypeMem, Epoch: 1, Batch: b, Phase: PhaseTrain, Peak: int64(b+1) << 20, Live: int64(b) << 20, Budget: 8 << 20},
			Event{T: TypeGPU, Ts: int64(5-b) * 10 * ms, Used: int64(b) << 20, Total: 1 << 30, Util: 0.5}, // out of order
		)
	}
	evs = append(evs,
		// an evaluation on compute that starts inside batch 2's train and ends inside batch 4's
		Event{T: TypeSpan, Name: StageEval, Lane: LaneCompute, Epoch: 1, Batch: -1, Start: 25 * ms, Dur: 20 * ms},
		Event{T: TypeMetric, Name: "val_acc", Epoch: 1, Batch: -1, Value: 0.75},
		Event{T: TypeMetric, Name: "loss", Epoch: 1, Batch: -1, Value: math.NaN()}, // not a counter value: skipped
		Event{T: TypeGuard, Epoch: 1, Batch: 5, Predicted: 9 << 20, Actual: 5 << 20, Budget: 8 << 20, Action: ActionSplit},
		Event{T: TypeOOM, Epoch: 1, Batch: 5, Requested: 9 << 20, Live: 5 << 20, Budget: 8 << 20, Action: ActionSkip},
		Event{T: TypeStale, Epoch: 1, Batch: 5, Layer: 1, Mean: 1.5, Max: 3},
		Event{T: TypeHistErr, Epoch: 1, Layer: 1, RelErr: 0.01},
		Event{T: TypeCache, Epoch: 1, Batch: 4, Hits: 3, Misses: 1, BytesH2D: 400},
		Event{T: TypeCache, Epoch: 1, Batch: 5}, // no input rows: no hit rate
		Event{T: TypeRunEnd, Status: StatusOK},
	)
	return evs
}

type spanKey struct {
	name, lane   string
	epoch, batch int
	start, dur   int64
}

// checkTrace verifies the structure of a trace made of runs.
func checkTrace(t *testing.T, out []byte, runs [][]Event) []traceEvent {
	t.Helper()
	tevs := decodeTrace(t, out)
	want := map[spanKey]int{}
	nspans := 0
	for pid, evs := range runs {
		for _, e := range evs {
			if e.T == TypeSpan {
				want[spanKey{fmt.Sprint(pid+1, e.Name), e.Lane, e.Epoch, e.Batch, e.Start, max(e.Dur, 0)}]++
				nspans++
			}
		}
	}
	procNames := map[int]string{}
	threadNames := map[[2]int]string{}
	byThread := map[[2]int][]traceEvent{}
	lastCounter := map[string]int64{}
	tidPid := map[int]int{}
	got := 0
	for _, e := range tevs {
		if e.Tid != 0 {
			if p, ok := tidPid[e.Tid]; ok && p != e.Pid {
				t.Errorf("thread id %d used by processes %d and %d", e.Tid, p, e.Pid)
			}
			tidPid[e.Tid] = e.Pid
		}
		switch e.Ph {
		case "M":
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			switch e.Name {
			case "process_name":
				procNames[e.Pid] = a.Name
			case "thread_name":
				threadNames[[2]int{e.Pid, e.Tid}] = a.Name
			}
		case "X":
			var a spanArgs
			if err := json.Unmarshal(e.Args, &a); err != nil {
				t.Fatalf("span args %s: %v", e.Args, err)
			}
			k := spanKey{fmt.Sprint(e.Pid, e.Name), e.Cat, a.Epoch, a.Batch, e.startNs(), e.endNs() - e.startNs()}
			if want[k] == 0 {
				t.Errorf("unexpected or repeated span %+v", k)
			}
			want[k]--
			got++
			byThread[[2]int{e.Pid, e.Tid}] = append(byThread[[2]int{e.Pid, e.Tid}], e)
		case "C":
			key := fmt.Sprint(e.Pid, e.Name)
			if ts := e.startNs(); ts < lastCounter[key] {
				t.Errorf("counter %s goes back in time: %d after %d", key, ts, lastCounter[key])
			} else {
				lastCounter[key] = ts
			}
			var args map[string]float64
			if err := json.Unmarshal(e.Args, &args); err != nil || len(args) != 1 {
				t.Errorf("counter args %s: %v", e.Args, err)
			}
		case "i":
			if e.S != "t" || threadNames[[2]int{e.Pid, e.Tid}] == "" {
				t.Errorf("instant %+v on unnamed thread", e)
			}
		default:
			t.Errorf("unexpected phase %q", e.Ph)
		}
	}
	if got != nspans {
		t.Errorf("%d spans in the trace, %d recorded", got, nspans)
	}
	for pid := range runs {
		if procNames[pid+1] == "" {
			t.Errorf("process %d has no name", pid+1)
		}
	}
	// on every thread, spans are disjoint or nested
	for th, spans := range byThread {
		if threadNames[th] == "" {
			t.Errorf("thread %v has no name", th)
		}
		for i := range spans {
			for j := i + 1; j < len(spans); j++ {
				a, b := spans[i], spans[j]
				as, ae, bs, be := a.startNs(), a.endNs(), b.startNs(), b.endNs()
				disjoint := ae <= bs || be <= as
				nested := (as <= bs && be <= ae) || (bs <= as && ae <= be)
				if !disjoint && !nested {
					t.Fatalf("thread %q: %s [%d,%d) and %s [%d,%d) overlap partially", threadNames[th], a.Name, as, ae, b.Name, bs, be)
				}
			}
		}
	}
	return tevs
}

func TestTraceStructure(t *testing.T) {
	runs := [][]Event{traceRunEvents("optimized"), traceRunEvents("baseline")}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, runs...); err != nil {
		t.Fatal(err)
	}
	tevs := checkTrace(t, buf.Bytes(), runs)

	var procs, threads []string
	tid := map[string]int{} // "name/epoch/batch" on pid 1 -> tid
	counters := map[string]int{}
	var instants []string
	for _, e := range tevs {
		if e.Pid != 1 {
			continue
		}
		var a struct {
			Name  string
			Epoch int
			Batch int
		}
		json.Unmarshal(e.Args, &a)
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				procs = append(procs, a.Name)
			} else if e.Name == "thread_name" {
				threads = append(threads, a.Name)
			}
		case "X":
			tid[fmt.Sprintf("%s/%d/%d", e.Name, a.Epoch, a.Batch)] = e.Tid
		case "C":
			counters[e.Name]++
		case "i":
			instants = append(instants, e.Name)
		}
	}
	if len(procs) != 1 || procs[0] != "optimized (variant optimized, session s1)" {
		t.Errorf("process names %q", procs)
	}
	if want := []string{"compute", "compute #2", "sampler/0", "sampler/1"}; !slices.Equal(threads, want) {
		t.Errorf("threads %q, want %q", threads, want)
	}
	// children share their train span's track; the crossing eval does not
	for b := range 6 {
		tr := tid[fmt.Sprintf("train/1/%d", b)]
		for _, c := range []string{"forward", "backward", "step"} {
			if tid[fmt.Sprintf("%s/1/%d", c, b)] != tr {
				t.Errorf("batch %d: %s not on its train span's track", b, c)
			}
		}
	}
	if tid["eval/1/-1"] == tid["train/1/2"] {
		t.Error("the overlapping eval shares the train spans' track")
	}
	for name, n := range map[string]int{"memory peak": 6, "memory live": 6, "memory budget": 6, "gpu used": 6, "gpu util": 6,
		"batch_loss": 6, "val_acc": 1, "loss": 0, "staleness mean L1": 1, "staleness max L1": 1, "history rel_err L1": 1,
		"cache hit rate": 1, "cache bytes h2d": 2} {
		if counters[name] != n {
			t.Errorf("counter %q: %d samples, want %d", name, counters[name], n)
		}
	}
	if !strings.Contains(buf.String(), `{"name":"cache hit rate","ph":"C","pid":1,"tid":0,"ts":67000,"args":{"value":0.75}}`) {
		t.Error("no cache hit rate of 0.75")
	}
	// a guard action is not an OOM: its own instant, with its figures
	if !slices.Equal(instants, []string{"guard (split)", "OOM (skip)", "run end: ok"}) {
		t.Errorf("instants %q", instants)
	}
	if !strings.Contains(buf.String(), `"predicted":9437184,"actual":5242880,"budget":8388608,"action":"split"`) {
		t.Error("guard instant without its predicted and actual bytes")
	}
	// ts and dur in microseconds with nanosecond precision
	if !strings.Contains(buf.String(), `"ts":6000.007,"dur":2000`) {
		t.Error("transfer span of batch 0 not at 6000.007 us for 2000 us")
	}
	if !strings.Contains(buf.String(), `"attrs":{"nodes":100}`) {
		t.Error("span attrs missing")
	}
}

// Random spans, some nested, many partially overlapping: every track is
// properly nested and every span is there once.
func TestTraceRandomTracks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		evs := []Event{{T: TypeRunStart, Run: "r"}}
		for i := range 300 {
			start := rng.Int64N(1_000_000)
			dur := rng.Int64N(50_000)
			lane := []string{LaneCompute, LaneEval, "odd lane"}[rng.IntN(3)]
			evs = append(evs, Event{T: TypeSpan, Name: "s", Lane: lane, Batch: i, Start: start, Dur: dur})
			if rng.IntN(3) == 0 { // a child, sometimes sharing start or end
				cs := start + rng.Int64N(dur+1)
				ce := cs + rng.Int64N(start+dur-cs+1)
				evs = append(evs, Event{T: TypeSpan, Name: "child", Lane: lane, Batch: i, Start: cs, Dur: ce - cs})
			}
		}
		evs = append(evs, Event{T: TypeSpan, Name: "neg", Lane: LaneCompute, Start: 10, Dur: -5}) // clamped to 0
		var buf bytes.Buffer
		if err := WriteTrace(&buf, evs); err != nil {
			t.Fatal(err)
		}
		checkTrace(t, buf.Bytes(), [][]Event{evs})
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

func TestAssignTracks(t *testing.T) {
	// parent [0,10) with children [0,4) [4,10); a crossing span [8,12); a
	// later span [12,13) back on track 0; a span equal to the parent nests
	starts := []int64{0, 0, 4, 8, 12, 0}
	durs := []int64{10, 4, 6, 4, 1, 10}
	got := AssignTracks(starts, durs)
	want := []int{0, 0, 0, 1, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("tracks %v, want %v", got, want)
	}
	if len(AssignTracks(nil, nil)) != 0 {
		t.Error("no spans")
	}
}

func TestAppendMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0", 5: "0.005", 1000: "1", 1234567: "1234.567", -1500: "-1.500", 60_000_000_010: "60000000.010"} {
		if got := string(appendMicros(nil, ns)); got != want {
			t.Errorf("%d ns: %q, want %q", ns, got, want)
		}
	}
}

func TestTraceEmptyAndOffsets(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if evs := decodeTrace(t, buf.Bytes()); len(evs) != 0 {
		t.Errorf("empty trace has %d events", len(evs))
	}
	tr := NewTrace()
	r := tr.NewRun("named", "", "")
	r.Offset = 2_000_000
	r.Add(&Event{T: TypeRunStart, Run: "ignored", Variant: "v"})
	r.Add(&Event{T: TypeSpan, Name: "x\"y", Lane: "l\\", Start: 1000, Dur: 1000, Attrs: json.RawMessage(`{"bad":NaN}`)})
	r.Add(&Event{T: TypeOOM, Action: ActionAbort}) // no compute lane: an "events" thread
	buf.Reset()
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	tevs := decodeTrace(t, buf.Bytes())
	var names []string
	for _, e := range tevs {
		if e.Ph == "X" && (e.Ts != 2001 || e.Name != "x\"y" || e.Cat != "l\\") {
			t.Errorf("span %+v", e)
		}
		if e.Ph == "M" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			names = append(names, a.Name)
		}
	}
	if !slices.Contains(names, "named (variant v)") || !slices.Contains(names, "events") {
		t.Errorf("names %q", names)
	}
}
