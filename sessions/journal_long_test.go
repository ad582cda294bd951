package sessions

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gnnscope/gnnscope/profile"
)

// repeatReader yields n bytes of c, without holding them.
type repeatReader struct {
	n int64
	c byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return int(k), nil
}

// TestScanSkipsLongLine reads an 80 MB line between two events: both
// events are delivered, the line is counted as malformed with its offset
// named, and far less than the line is allocated.
func TestScanSkipsLongLine(t *testing.T) {
	ev := sampleEvents()
	first, last := line(ev[0]), line(ev[len(ev)-1])
	const n = 80 << 20
	r := io.MultiReader(strings.NewReader(first), &repeatReader{n: n, c: 'x'}, strings.NewReader("\n"+last))
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	var got []string
	st, err := ScanJournal(r, func(e *profile.Event) error {
		got = append(got, e.T)
		return nil
	})
	runtime.ReadMemStats(&ms1)
	if err != nil || len(got) != 2 || got[0] != profile.TypeRunStart || got[1] != profile.TypeRunEnd {
		t.Fatalf("events %v, %v", got, err)
	}
	if st.Malformed != 1 || st.Lines != 3 || st.Bytes != int64(len(first)+n+1+len(last)) ||
		!strings.HasPrefix(st.FirstError, "line at offset "+strconv.Itoa(len(first))+": ") {
		t.Errorf("stats %+v", st)
	}
	if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 3*MaxEventSize {
		t.Errorf("allocated %d bytes for an %d-byte line", a, n)
	}
}

// TestReaderMaxLine checks the limit at its edges with a small maximum,
// reading one byte at a time and at once: a line of max bytes is decoded,
// longer ones are skipped (torn when they have no newline), and the
// events around them survive.
func TestReaderMaxLine(t *testing.T) {
	ev := line(sampleEvents()[3]) // {"t":"mem",...}
	max := len(ev) - 1
	long := `{"t":"mem","x":1}` + strings.Repeat(" ", max) + "\n"
	input := ev + long + strings.Repeat("y", 3*max) + "\n" + ev + long[:len(long)-1]
	for _, one := range []bool{false, true} {
		var r io.Reader = strings.NewReader(input)
		if one {
			r = iotest.OneByteReader(r)
		}
		jr := newJournalReader(r)
		jr.max = max
		var e profile.Event
		events := 0
		for {
			ok, err := jr.next(&e)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			events++
		}
		st := jr.st
		want := "line at offset " + strconv.Itoa(len(ev)) + ": "
		if events != 2 || st.Malformed != 2 || !st.Torn || st.Bytes != int64(len(input)-len(long)+1) ||
			!strings.HasPrefix(st.FirstError, want) {
			t.Errorf("one byte %v: %d events, %+v", one, events, st)
		}
	}
}

// TestReadJournalNamesLongLine checks ReadJournal names the journal of a
// line over MaxEventSize.
func TestReadJournalNamesLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	ev := sampleEvents()
	var b bytes.Buffer
	b.WriteString(line(ev[0]))
	b.WriteString(strings.Repeat("z", MaxEventSize+1) + "\n")
	b.WriteString(line(ev[1]))
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, st, err := ReadJournal(path)
	if err != nil || len(evs) != 2 || st.Malformed != 1 ||
		!strings.HasPrefix(st.FirstError, "journal "+path+": line at offset ") {
		t.Errorf("%d events, %+v, %v", len(evs), st, err)
	}
}
