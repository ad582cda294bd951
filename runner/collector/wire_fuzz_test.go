package collector

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLines feeds arbitrary bytes to the collector's line handling: the
// line reader must cut them as a split on newlines does, refusing every
// line over its limit (an unended one too) and nothing else, and no line may make the hello
// or message parsers panic; a parsed event is a part of its line.
func FuzzLines(f *testing.F) {
	f.Add([]byte(`{"hello":1,"token":"ab","run":"r","rank":0,"world":2,"node":"n","node_rank":1}` + "\n"))
	f.Add([]byte(`{"seq":3,"ev":{"t":"span","start":1}}` + "\n" + `{"sync":12}` + "\n" + `{"bye":4}` + "\n"))
	f.Add([]byte(`{"clock":{"ts":1,"offset":-2,"delay":3,"samples":8}}` + "\n{\"seq\":-1,\"ev\":null}\n"))
	f.Add([]byte(`{"hello":1,"rank":null}` + "\n\n" + `{"seq":1.5}` + "\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 40
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var buf []byte
		want := bytes.Split(data, []byte("\n"))
		tail := want[len(want)-1] // the text after the last newline is no line
		want = want[:len(want)-1]
		for i := 0; ; i++ {
			line, err := readLine(r, &buf, limit)
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("%d lines read, %d in the input", i, len(want))
				}
				return
			}
			if i == len(want) && errors.Is(err, errLineTooLong) && len(tail) > limit {
				return // refused before its end
			}
			if i >= len(want) {
				t.Fatalf("line %d read beyond the input's %d: %q, %v", i, len(want), line, err)
			}
			if errors.Is(err, errLineTooLong) != (len(want[i]) > limit) {
				t.Fatalf("line %d of %d bytes: %v", i, len(want[i]), err)
			}
			if err != nil {
				return // the connection ends here
			}
			if !bytes.Equal(line, want[i]) {
				t.Fatalf("line %d is %q, want %q", i, line, want[i])
			}
			parseHello(line)
			m, err := parseMessage(line)
			if err == nil && m.Kind == msgEvent && (len(m.Ev) == 0 || !bytes.Contains(line, m.Ev) || m.Seq < 0) {
				t.Fatalf("event %q, seq %d of line %q", m.Ev, m.Seq, line)
			}
		}
	})
}
