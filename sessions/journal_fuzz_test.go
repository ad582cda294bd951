package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gnnscope/gnnscope/profile"
)

// FuzzScanJournal feeds arbitrary bytes to the journal reader: it must
// never fail or panic on content, its counts must add up, reading one
// byte at a time must give the same events, every complete line must be
// judged as DecodeEvent judges it alone, and the streaming summary must
// see the same events. The seed corpus is in testdata/fuzz/FuzzScanJournal.
func FuzzScanJournal(f *testing.F) {
	// Seeds stay under about 200 bytes: the fuzzer minimizes every new
	// input it finds, in time quadratic in its length, so mutants of a
	// seed of a kilobyte keep it minimizing instead of fuzzing. Long
	// lines, deep nesting and full journals are in the unit tests
	// (TestReadSkipsGarbage and the *_long_test.go files).
	good := []byte(`{"t":"run_start","v":1,"run":"a"}` + "\n" +
		`{"t":"span","name":"train","start":1,"dur":2,"attrs":{"n":5}}` + "\n" +
		`{"t":"metric","name":"loss","value":0.5}` + "\n" + `{"t":"run_end","status":"ok"}` + "\n")
	f.Add(good)
	f.Add(good[:len(good)-7])                                                    // torn last line
	f.Add(append(append([]byte("garbage\n\x00\x00\n"), good[:40]...), "{\n"...)) // garbage around
	f.Add([]byte("{\"t\":\"span\",\"attrs\":" + strings.Repeat("[", 40) + "\n"))
	// a line longer than the small reader's buffer and limit below
	f.Add([]byte("{\"t\":\"span\",\"name\":\"a\",\"attrs\":{\"s\":\"" + strings.Repeat("x", 90) + "\"}}\n{\"t\":\"mem\"}"))
	// a collected rank: node, corrected wall, its clock, a clock event
	f.Add([]byte(`{"t":"run_start","node":"b","node_rank":1,"wall_local":"x","clock":{"offset":-2,"delay":1,"samples":8}}` + "\n" +
		`{"t":"clock","ts":3,"clock":{"offset":-2}}` + "\n"))
	f.Add([]byte("{\"t\":\"metric\",\"value\":NaN}\r\n{\"t\":\"stale\",\"mean\":\"Inf\",\"max\":-Infinity}\r\n  \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Inputs are cut to fuzzJournalMax bytes, so the minimizer cuts
		// the rest at once. Every path is within reach: the scanner's
		// buffer is sized to its input and the small reader's limits are
		// tiny.
		data = data[:min(len(data), fuzzJournalMax)]
		var evs []profile.Event
		st, err := ScanJournal(bytes.NewReader(data), func(e *profile.Event) error {
			evs = append(evs, *e)
			return nil
		})
		if errors.Is(err, ErrNewerSchema) {
			return // refused by design: a run_start of a newer schema version
		}
		if err != nil {
			t.Fatalf("error on content: %v", err)
		}
		if st.Events != len(evs) || st.Events+st.Malformed != st.Lines {
			t.Fatalf("counts: %d events delivered, stats %+v", len(evs), st)
		}
		if st.Bytes > int64(len(data)) || (!st.Torn && st.Bytes != int64(len(data))) {
			t.Fatalf("bytes %d of %d (torn %v)", st.Bytes, len(data), st.Torn)
		}
		if st.Torn && bytes.IndexByte(data[st.Bytes:], '\n') >= 0 {
			t.Fatalf("torn tail %q holds a newline", data[st.Bytes:])
		}
		if (st.Malformed > 0) != (st.FirstMalformed > 0) || (st.FirstMalformed > st.Lines) {
			t.Fatalf("first malformed %d of %d lines", st.FirstMalformed, st.Lines)
		}

		// line by line, as DecodeEvent judges each line alone
		lines := bytes.SplitAfter(data, []byte{'\n'})
		decoded, malformed := 0, 0
		for _, l := range lines {
			if len(l) == 0 || blank(l) {
				continue
			}
			var e profile.Event
			ok := profile.DecodeEvent(l, &e) == nil
			switch {
			case ok:
				if !reflect.DeepEqual(e, evs[decoded]) && !hasNaN(&e) {
					t.Fatalf("event %d: %+v, scanner gave %+v", decoded, e, evs[decoded])
				}
				decoded++
			case l[len(l)-1] == '\n':
				malformed++
			}
		}
		if decoded != st.Events || malformed != st.Malformed {
			t.Fatalf("line by line: %d events, %d malformed; scanner %+v", decoded, malformed, st)
		}

		// one byte at a time
		n := 0
		br := bytes.NewReader(data)
		st1, err := ScanJournal(lenReader{iotest.OneByteReader(br), br}, func(e *profile.Event) error {
			if n >= len(evs) || (!reflect.DeepEqual(*e, evs[n]) && !hasNaN(e)) {
				t.Fatalf("byte-wise event %d differs", n)
			}
			n++
			return nil
		})
		if err != nil || st1 != st {
			t.Fatalf("byte-wise: %+v, %v; whole: %+v", st1, err, st)
		}

		// a reader with a tiny buffer and line limit: long lines take the
		// paths of lines over the buffer and over MaxEventSize
		small := &journalReader{br: bufio.NewReaderSize(bytes.NewReader(data), 16), max: 64}
		var e profile.Event
		smallEvents := 0
		for {
			ok, err := small.next(&e)
			if err != nil {
				t.Fatalf("small reader: %v", err)
			}
			if !ok {
				break
			}
			smallEvents++
		}
		// a too long last line without a newline is torn, not a line
		s := small.st
		sameLines := s.Lines == st.Lines || (s.Torn && !st.Torn && s.Lines+1 == st.Lines)
		if s.Events != smallEvents || s.Events+s.Malformed != s.Lines || !sameLines || s.Events > st.Events {
			t.Fatalf("small reader: %d events, stats %+v; whole: %+v", smallEvents, s, st)
		}

		// the streaming summary sees the same
		js, err := SummarizeReader(bytes.NewReader(data))
		if err != nil || js.Read != st || js.Summary.Events != int64(st.Events) {
			t.Fatalf("summary: %+v %v", js.Read, err)
		}
	})
}

// hasNaN reports whether an event holds a NaN, which DeepEqual never
// finds equal.
func hasNaN(e *profile.Event) bool {
	for _, v := range []float64{e.Util, e.Mean, e.Max, e.RelErr, e.Value} {
		if v != v {
			return true
		}
	}
	return false
}

// fuzzJournalMax is the longest input FuzzScanJournal reads: minimizing
// an input takes time quadratic in its length.
const fuzzJournalMax = 256

// lenReader reads from Reader and says how much is left in r, so the
// scanner sizes its buffer to the input (as it does for a bytes.Reader):
// a full buffer per call would make each run of the fuzzer slow.
type lenReader struct {
	io.Reader
	r *bytes.Reader
}

func (l lenReader) Len() int { return l.r.Len() }
