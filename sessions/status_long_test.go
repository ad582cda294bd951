package sessions

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// countingReaderAt counts the bytes read and the largest single read.
type countingReaderAt struct {
	r       *bytes.Reader
	read    int64
	biggest int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.read += int64(len(p))
	c.biggest = max(c.biggest, len(p))
	return c.r.ReadAt(p, off)
}

// TestLastDecodedSkipsLongLines puts lines over the maximum after a
// run_end, and a long torn line at the end: the run_end is found, no read
// is larger than a block, and each byte is read at most twice.
func TestLastDecodedSkipsLongLines(t *testing.T) {
	const maxLine = 1000
	ev := sampleEvents()
	end := ev[len(ev)-1]
	end.Error = strings.Repeat("e", 100)
	data := line(ev[4]) + line(end) + strings.Repeat("g", 300<<10) + "\n" +
		strings.Repeat("\n", 5) + "not json\n" + strings.Repeat("h", 200<<10) + "\n" + strings.Repeat("t", 500<<10)
	c := &countingReaderAt{r: bytes.NewReader([]byte(data))}
	e, err := lastDecoded(c, int64(len(data)), maxLine)
	if err != nil || e == nil || e.T != profile.TypeRunEnd {
		t.Fatalf("got %+v, %v", e, err)
	}
	if c.biggest > 64<<10 || c.read > 2*int64(len(data)) {
		t.Errorf("largest read %d, %d bytes read of %d", c.biggest, c.read, len(data))
	}
	// with a maximum of the gpu line's length, the longer run_end is skipped
	if e, err := lastDecoded(bytes.NewReader([]byte(data)), int64(len(data)), len(line(ev[4]))-1); err != nil || e == nil || e.T != profile.TypeGPU {
		t.Errorf("run_end over the maximum: %+v, %v", e, err)
	}
	// the file shrank under the reader: an error, not a wrong answer
	if _, err := lastDecoded(bytes.NewReader([]byte(data[:100])), int64(len(data)), maxLine); err == nil {
		t.Error("no error for a short file")
	}
}

// FuzzLastEvent checks the backwards status scanner against a forward
// reading of the same bytes: the last complete line of at most the
// maximum length that decodes, or none.
func FuzzLastEvent(f *testing.F) {
	var good []byte
	for _, e := range sampleEvents() {
		good = profile.AppendLine(good, &e)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(append([]byte{}, good...), "garbage\n\n  \n{\"t\":"...))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"t":"run_end","status":"oom"}` + "\n" + strings.Repeat("x", 300) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxLine = 200
		got, err := lastDecoded(bytes.NewReader(data), int64(len(data)), maxLine)
		if err != nil {
			t.Fatalf("error on content: %v", err)
		}
		var want *profile.Event
		complete := data[:bytes.LastIndexByte(data, '\n')+1]
		for _, l := range bytes.SplitAfter(complete, []byte{'\n'}) {
			var e profile.Event
			if len(l) > 0 && len(l)-1 <= maxLine && !blank(l) && profile.DecodeEvent(l, &e) == nil {
				want = &e
			}
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		if got != nil && !hasNaN(got) && !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}
