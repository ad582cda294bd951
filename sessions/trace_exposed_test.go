package sessions

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestTraceExposedLane: each run's trace process has a thread named
// after ExposedLane whose slices are the exposed stages, laid end to end
// within the run.
func TestTraceExposedLane(t *testing.T) {
	s, a, _ := twoRunSession(t)
	writeJournal(t, s.JournalPath("a"), a)
	tr, ts, err := BuildTrace([]RunRef{{Session: s, Run: "a"}}, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name string
			Tid      int
			Ts, Dur  float64
			Args     map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tid := -1
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args["name"] == ExposedLane {
			tid = e.Tid
		}
	}
	if tid < 0 {
		t.Fatalf("no %s lane:\n%s", ExposedLane, buf.String())
	}
	n, end := 0, -1.0
	for _, e := range doc.TraceEvents {
		if e.Ph != "X" || e.Tid != tid {
			continue
		}
		n++
		if len(e.Name) < 9 || e.Name[:8] != "exposed " || e.Ts < end-1e-6 {
			t.Errorf("slice %q at %v (previous end %v)", e.Name, e.Ts, end)
		}
		end = e.Ts + e.Dur
	}
	if n == 0 || ts.Spans == 0 {
		t.Errorf("%d exposed slices, %d spans", n, ts.Spans)
	}
}
