package sessions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestTailerSkipsLongLine appends a 40 MB line in 1 MB pieces, as a tailer
// sees a writer append it, between two events: both events are delivered,
// the long line is counted as malformed with its offset named, the
// tailer's buffer never holds it (capacity under twice MaxEventSize) and
// every byte is searched for a newline once.
func TestTailerSkipsLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	ev := sampleEvents()
	first, last := line(ev[0]), line(ev[len(ev)-1])
	appendRaw(t, path, first)
	tl := NewTailer(path, TailOptions{})
	defer tl.Close()
	var got []profile.Event
	poll := func() {
		t.Helper()
		evs, err := tl.Poll()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
		if c := cap(tl.buf); c >= 2*MaxEventSize {
			t.Fatalf("buffer capacity %d holds the long line", c)
		}
	}
	poll()
	piece := `{"t":"span","name":"` + strings.Repeat("x", 1<<20-20)
	const pieces = 40
	for range pieces {
		appendRaw(t, path, piece)
		poll()
	}
	if !tl.Stats().Torn {
		t.Error("a pending long line is not reported as torn")
	}
	appendRaw(t, path, "\"}\n"+last)
	poll()
	if len(got) != 2 || got[0].T != profile.TypeRunStart || got[1].T != profile.TypeRunEnd || !tl.Ended() {
		t.Fatalf("events around the long line: %d %+v", len(got), got)
	}
	st := tl.Stats()
	want := fmt.Sprintf("journal %s: line at offset %d:", path, len(first))
	if st.Malformed != 1 || st.FirstMalformed != 2 || !strings.HasPrefix(st.FirstError, want) ||
		!strings.Contains(st.FirstError, ErrEventTooLong.Error()) {
		t.Errorf("stats %d malformed, first %d: %q", st.Malformed, st.FirstMalformed, st.FirstError)
	}
	size := int64(len(first) + pieces*len(piece) + 3 + len(last))
	if tl.Offset() != size || st.Bytes != size || st.Torn {
		t.Errorf("offset %d, stats %+v, want %d", tl.Offset(), st, size)
	}
	if tl.seen != size {
		t.Errorf("searched %d bytes for newlines, want each of %d once", tl.seen, size)
	}
	if tl.buf != nil && cap(tl.buf) > tailKeep {
		t.Errorf("kept a %d-byte buffer after the long line", cap(tl.buf))
	}
}

// TestTailerLinearWork appends one line a byte at a time, then in growing
// pieces, and checks the bytes searched for newlines equal the bytes read:
// a partial line is never searched again from its start.
func TestTailerLinearWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	tl := NewTailer(path, TailOptions{})
	defer tl.Close()
	tl.max = 1000
	ev := sampleEvents()
	long := line(ev[2])
	var all strings.Builder
	for i := range len(long) {
		appendRaw(t, path, long[i:i+1])
		all.WriteString(long[i : i+1])
		if _, err := tl.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n < 5000; n *= 3 {
		s := strings.Repeat("y", n) + "\n" + line(ev[3])
		appendRaw(t, path, s)
		all.WriteString(s)
		if _, err := tl.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	if tl.seen != int64(all.Len()) {
		t.Errorf("searched %d bytes for %d appended", tl.seen, all.Len())
	}
	st := tl.Stats()
	// 1, 3, ..., 729 y's are malformed lines; 2187 is over the maximum
	if st.Events != 1+8 || st.Malformed != 8 || st.Torn {
		t.Errorf("stats %+v", st)
	}
}

// TestTailerDecodesLineAcrossReads checks a line longer than a read (64
// KiB) and under MaxEventSize is decoded whole.
func TestTailerDecodesLineAcrossReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	e := profile.Event{T: profile.TypeMetric, Name: strings.Repeat("n", 300<<10), Value: 1}
	appendRaw(t, path, line(e)+line(sampleEvents()[3]))
	tl := NewTailer(path, TailOptions{})
	defer tl.Close()
	evs, err := tl.Poll()
	if err != nil || len(evs) != 2 || evs[0].Name != e.Name || tl.Stats().Malformed != 0 {
		t.Fatalf("%d events, %v, %+v", len(evs), err, tl.Stats())
	}
}

// FuzzTail feeds arbitrary bytes to a tailer in two appends split at any
// point, with a small maximum line size: it must not fail or panic, must
// deliver what ScanJournal delivers for the complete lines when no line
// is over the maximum, and must search each byte once.
func FuzzTail(f *testing.F) {
	var good []byte
	for _, e := range sampleEvents() {
		good = profile.AppendLine(good, &e)
	}
	f.Add(good, uint16(100))
	f.Add(good[:len(good)-7], uint16(3))
	f.Add(append([]byte("garbage\n\n"+strings.Repeat("z", 3000)+"\n"), good...), uint16(2000))
	f.Add([]byte("{\"t\":\"mem\"}\r\n  \n{"), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		const max = 1024
		path := filepath.Join(t.TempDir(), "j.jsonl")
		cut := min(int(split), len(data))
		if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		tl := NewTailer(path, TailOptions{})
		defer tl.Close()
		tl.max = max
		a, err := tl.Poll()
		if err != nil {
			t.Fatal(err)
		}
		appendRaw(t, path, string(data[cut:]))
		b, err := tl.Poll()
		if err != nil {
			t.Fatal(err)
		}
		got := append(a, b...)
		st := tl.Stats()
		if tl.seen != int64(len(data)) || cap(tl.buf) > 2*max+64<<10 {
			t.Fatalf("searched %d of %d bytes, buffer %d", tl.seen, len(data), cap(tl.buf))
		}
		if st.Events != len(got) || st.Events+st.Malformed != st.Lines {
			t.Fatalf("counts: %d events, stats %+v", len(got), st)
		}
		complete := data[:bytes.LastIndexByte(data, '\n')+1]
		if tl.Offset() != int64(len(complete)) || st.Torn != (len(complete) < len(data)) {
			t.Fatalf("offset %d of %d complete bytes, torn %v", tl.Offset(), len(complete), st.Torn)
		}
		for _, l := range bytes.Split(complete, []byte{'\n'}) {
			if len(l) > max {
				return
			}
		}
		var want []profile.Event
		if _, err := ScanJournal(bytes.NewReader(complete), func(e *profile.Event) error {
			want = append(want, *e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(want) != len(got) {
			t.Fatalf("tailer gave %d events, scanner %d", len(got), len(want))
		}
	})
}
