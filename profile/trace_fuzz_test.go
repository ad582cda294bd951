package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzRuns decodes runs of events from b: one journal line per line, a
// line "---" between runs; lines that do not decode are skipped.
func fuzzRuns(b []byte) [][]Event {
	runs := [][]Event{nil}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if string(line) == "---" {
			runs = append(runs, nil)
			continue
		}
		var e Event
		if DecodeEvent(line, &e) == nil {
			runs[len(runs)-1] = append(runs[len(runs)-1], e)
		}
	}
	return runs
}

// microsToNs reads a trace time (microseconds, up to 3 decimals) exactly.
func microsToNs(t *testing.T, n json.Number) *big.Int {
	t.Helper()
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	v, ok := new(big.Int).SetString(whole+(frac + "000")[:3], 10)
	if !ok || len(frac) > 3 {
		t.Fatalf("time %q is not microseconds with at most 3 decimals", s)
	}
	if neg {
		v.Neg(v)
	}
	return v
}

// fuzzTraceEvent is the part of an exported event the checks read.
type fuzzTraceEvent struct {
	Name string      `json:"name"`
	Ph   string      `json:"ph"`
	Pid  int         `json:"pid"`
	Tid  int         `json:"tid"`
	Ts   json.Number `json:"ts"`
	Dur  json.Number `json:"dur"`
}

// checkNesting checks that on every thread the complete events are
// disjoint or nested.
func checkNesting(t *testing.T, evs []fuzzTraceEvent) {
	t.Helper()
	type span struct{ start, end *big.Int }
	threads := map[[2]int][]span{}
	for _, e := range evs {
		if e.Ph != "X" {
			continue
		}
		start := microsToNs(t, e.Ts)
		dur := microsToNs(t, e.Dur)
		if dur.Sign() < 0 {
			t.Fatalf("span %q has a negative duration %s", e.Name, e.Dur)
		}
		k := [2]int{e.Pid, e.Tid}
		threads[k] = append(threads[k], span{start, new(big.Int).Add(start, dur)})
	}
	for k, spans := range threads {
		slices.SortStableFunc(spans, func(a, b span) int {
			if c := a.start.Cmp(b.start); c != 0 {
				return c
			}
			return b.end.Cmp(a.end)
		})
		var open []*big.Int // ends of the enclosing spans
		for _, s := range spans {
			for len(open) > 0 && open[len(open)-1].Cmp(s.start) <= 0 {
				open = open[:len(open)-1]
			}
			if len(open) > 0 && s.end.Cmp(open[len(open)-1]) > 0 {
				t.Fatalf("thread %v: span [%s, %s) crosses an enclosing span ending at %s", k, s.start, s.end, open[len(open)-1])
			}
			open = append(open, s.end)
		}
	}
}

// traceSeed is a journal of every event type, twice (as two runs), with
// times at the edges of int64.
func traceSeed() []byte {
	var b []byte
	for _, e := range allTypes() {
		b = AppendLine(b, &e)
	}
	b = append(b, "---\n"...)
	for _, e := range []Event{
		{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Start: math.MaxInt64 - 10, Dur: 100},
		{T: TypeSpan, Name: StageForward, Lane: LaneCompute, Start: math.MaxInt64 - 5, Dur: 2},
		{T: TypeSpan, Name: StageEval, Lane: LaneCompute, Start: math.MaxInt64 - 8, Dur: 200},
		{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Start: math.MinInt64, Dur: math.MaxInt64},
		{T: TypeSpan, Name: "x\xff\u2028", Lane: "rank1/compute", Start: 5, Dur: -7, Attrs: json.RawMessage(`{"s":"\xff"}`)},
		{T: TypeStale, Layer: 1, Mean: 1.5e308, Max: 1.7e308},
		{T: TypeStale, Layer: 1, Mean: 1.5e308, Max: math.Inf(1)},
		{T: TypeMetric, Name: "loss", Value: math.NaN()},
		{T: TypeRunEnd, Status: "ok\x00", Error: "\"quoted\"\n"},
	} {
		b = AppendLine(b, &e)
	}
	return b
}

// FuzzTrace: any events decoded from the fuzz bytes, split into runs,
// export as a Chrome trace that is valid JSON (and UTF-8), whose byte
// count WriteTo reports right, that holds every span once, and whose
// spans nest on every thread; their aggregation has no negative time and
// its summary encodes to JSON that survives decoding and encoding again. Run:
// go test -run x -fuzz FuzzTrace -fuzztime 20s ./profile/
func FuzzTrace(f *testing.F) {
	f.Add(traceSeed(), int64(0))
	f.Add(traceSeed(), int64(math.MaxInt64))
	f.Add([]byte(`{"t":"span","name":"train","lane":"compute","start":1,"dur":5}`+"\n---\n"), int64(-3))
	f.Fuzz(func(t *testing.T, b []byte, offset int64) {
		runs := fuzzRuns(b)
		tr := NewTrace()
		spans := 0
		minStart, maxStart := int64(math.MaxInt64), int64(math.MinInt64)
		for _, evs := range runs {
			r := tr.NewRun("", "", "")
			r.Offset = offset
			for i := range evs {
				r.Add(&evs[i])
				if evs[i].T == TypeSpan {
					spans++
					minStart, maxStart = min(minStart, evs[i].Start), max(maxStart, evs[i].Start)
				}
			}
			checkSummary(t, Summarize(evs))
		}
		var out bytes.Buffer
		n, err := tr.WriteTo(&out)
		if err != nil || n != int64(out.Len()) {
			t.Fatalf("WriteTo: %d bytes reported, %d written, %v", n, out.Len(), err)
		}
		if !json.Valid(out.Bytes()) || !utf8.Valid(out.Bytes()) {
			t.Fatalf("not valid JSON in UTF-8:\n%s", out.Bytes())
		}
		var doc struct {
			TraceEvents []fuzzTraceEvent `json:"traceEvents"`
		}
		dec := json.NewDecoder(&out)
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, e := range doc.TraceEvents {
			if e.Ph != "X" {
				continue
			}
			got++
			// The offset moves spans one way, never wrapping around.
			ts := microsToNs(t, e.Ts)
			if offset >= 0 && ts.Cmp(big.NewInt(minStart)) < 0 || offset <= 0 && ts.Cmp(big.NewInt(maxStart)) > 0 {
				t.Fatalf("span at %s ns with offset %d; spans start in [%d, %d]", ts, offset, minStart, maxStart)
			}
		}
		if got != spans {
			t.Fatalf("%d spans exported, %d added", got, spans)
		}
		if offset == 0 {
			checkNesting(t, doc.TraceEvents)
		}
	})
}

// checkSummary checks that the times of s are not negative (sums of
// durations must not wrap around) and that s encodes, as valid JSON, to
// what decoding it and encoding again gives.
func checkSummary(t *testing.T, s Summary) {
	t.Helper()
	times := []float64{s.WallS, s.DataWaitS, s.StagesS, s.SerialS, s.IdealS, s.Overlap, s.Efficiency}
	for _, m := range []map[string]float64{s.Stages, s.Lanes} {
		for _, v := range m {
			times = append(times, v)
		}
	}
	for _, ep := range s.Epochs {
		times = append(times, ep.WallS)
	}
	for _, v := range times {
		if !(v >= 0) {
			t.Fatalf("summary has a negative or NaN time: %+v", s)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("summary does not encode: %v (%+v)", err, s)
	}
	if !json.Valid(b) || !utf8.Valid(b) {
		t.Fatalf("summary encodes to invalid JSON: %s", b)
	}
	// Invalid UTF-8 in names encodes as \ufffd, which decodes to U+FFFD
	// and encodes as itself: the encoding is stable from the first
	// decoding on, and the numbers survive it.
	var back, back2 Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("summary %s does not decode: %v", b, err)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &back2); err != nil {
		t.Fatal(err)
	}
	again2, err := json.Marshal(back2)
	if err != nil || !bytes.Equal(again, again2) || back.WallS != s.WallS || back.Events != s.Events || back.StaleMean != s.StaleMean {
		t.Fatalf("summary round trip:\n%s\n%s\n%s (%v)", b, again, again2, err)
	}
}
