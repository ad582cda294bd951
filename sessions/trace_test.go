package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestBuildTrace builds a trace of two runs of a session (one with a
// damaged line) and one without a journal, at zero and on the wall clock.
func TestBuildTrace(t *testing.T) {
	s, a, b := twoRunSession(t) // b starts 20 ms after a
	writeJournal(t, s.JournalPath("a"), a)
	writeJournal(t, s.JournalPath("b"), b[:3])
	f, err := os.OpenFile(s.JournalPath("b"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{damaged\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeJournal(t, s.JournalPath("b"), b[3:])
	refs := []RunRef{{Session: s, Run: "a"}, {Session: s, Run: "b"}, {Session: s, Run: "c"}}

	// firstSpan returns the start of each process's first slice, in us.
	firstSpan := func(opts TraceOptions) map[int]float64 {
		t.Helper()
		tr, ts, err := BuildTrace(refs, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := TraceStats{Runs: 2, Spans: 8, Malformed: 1, Missing: []string{s.ID() + "/c"}}
		if !reflect.DeepEqual(ts, want) {
			t.Errorf("stats %+v, want %+v", ts, want)
		}
		var buf bytes.Buffer
		if _, err := tr.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []struct {
				Ph   string
				Pid  int
				Ts   float64
				Name string
				Args map[string]any
			}
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		first := map[int]float64{}
		names := map[int]string{}
		for _, e := range doc.TraceEvents {
			if f, ok := first[e.Pid]; e.Ph == "X" && (!ok || e.Ts < f) {
				first[e.Pid] = e.Ts
			}
			if e.Ph == "M" && e.Name == "process_name" {
				names[e.Pid], _ = e.Args["name"].(string)
			}
		}
		if len(first) != 2 || !strings.HasPrefix(names[1], "a ") || !strings.HasPrefix(names[2], "b ") {
			t.Errorf("processes %v, first slices %v", names, first)
		}
		return first
	}
	if got := firstSpan(TraceOptions{}); got[1] != got[2] {
		t.Errorf("runs at zero: first slices at %v", got)
	}
	if got := firstSpan(TraceOptions{WallClock: true}); got[2]-got[1] != 20000 {
		t.Errorf("on the wall clock: first slices at %v, want b 20000 us after a", got)
	}

	// no journal at all, no runs
	_, ts, err := BuildTrace(refs[2:], TraceOptions{})
	if !errors.Is(err, ErrNoJournal) || !strings.Contains(err.Error(), s.ID()+"/c") || ts.Runs != 0 {
		t.Errorf("no journal: %v, %+v", err, ts)
	}
	if _, _, err := BuildTrace(nil, TraceOptions{}); err == nil {
		t.Error("no runs: no error")
	}
	if got := listNames([]string{"a", "b", "c", "d", "e"}); got != "a, b, c and 2 more" {
		t.Errorf("listNames: %q", got)
	}
}
