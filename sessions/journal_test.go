package sessions

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func sampleEvents() []profile.Event {
	h := profile.LocalHost()
	return []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "base", Session: "s", Variant: "baseline",
			Config: json.RawMessage(`{"lr":0.01}`), Host: &h, Wall: "2026-11-22T15:30:45Z"},
		{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.SamplerLane(0)},
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Batch: 2, Start: 3, Dur: 4,
			Attrs: profile.Attrs(profile.Attr{Key: "nodes", Value: 5})},
		{T: profile.TypeMem, Phase: profile.PhaseTrain},
		{T: profile.TypeGPU, Ts: 5, Used: 6, Total: 7, Util: 0.5},
		{T: profile.TypeOOM, Epoch: 1, Requested: 9, Action: profile.ActionSkip},
		{T: profile.TypeStale, Layer: 1, Mean: 1.5, Max: 3, Hist: []int64{1, 2, 0}},
		{T: profile.TypeHistErr, RelErr: 0.01},
		{T: profile.TypeMetric, Name: "loss", Value: 0.25},
		{T: profile.TypeRunEnd, Status: profile.StatusOK, Summary: json.RawMessage(`{"a":1}`)},
	}
}

func writeJournal(t *testing.T, path string, evs []profile.Event) {
	t.Helper()
	w, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(evs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "base.jsonl")
	in := sampleEvents()
	w, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvents(in[:3]); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// flushed lines are in the file before Close
	mid, st, err := ReadJournal(path)
	if err != nil || len(mid) != 3 || st.Bytes == 0 {
		t.Fatalf("after Flush: %d events, %+v, %v", len(mid), st, err)
	}
	if err := w.WriteEvents(in[3:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := w.WriteEvents(in[:1]); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	out, st, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n%+v\n%+v", in, out)
	}
	fi, _ := os.Stat(path)
	if st.Lines != len(in) || st.Events != len(in) || st.Malformed != 0 || st.Torn || st.Bytes != fi.Size() {
		t.Errorf("stats %+v (size %d)", st, fi.Size())
	}
	// appending in a second session of writing keeps the earlier events
	writeJournal(t, path, in[:2])
	out, _, _ = ReadJournal(path)
	if len(out) != len(in)+2 {
		t.Errorf("after reopening: %d events", len(out))
	}
}

func TestReadTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	in := sampleEvents()[:4]
	writeJournal(t, path, in)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":"span","name":"train","lane":"compute","epoch":3,"ba`)
	f.Close()
	out, st, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) || !st.Torn || st.Malformed != 0 {
		t.Errorf("torn: %d events, %+v", len(out), st)
	}
	fi, _ := os.Stat(path)
	if st.Bytes >= fi.Size() {
		t.Errorf("bytes %d include the torn line (size %d)", st.Bytes, fi.Size())
	}

	// a new writer starts on a fresh line; the torn one becomes malformed
	writeJournal(t, path, in[1:2])
	out, st, _ = ReadJournal(path)
	if len(out) != 5 || !reflect.DeepEqual(out[4], in[1]) || st.Malformed != 1 || st.Torn {
		t.Errorf("after append: %d events, %+v", len(out), st)
	}

	// an object complete but for its newline is used
	path2 := filepath.Join(t.TempDir(), "k.jsonl")
	os.WriteFile(path2, profile.AppendEvent(nil, &in[1]), 0o644)
	out, st, _ = ReadJournal(path2)
	if len(out) != 1 || st.Torn {
		t.Errorf("no final newline: %d events, %+v", len(out), st)
	}
}

func TestReadSkipsGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var b []byte
	ev := sampleEvents()
	b = profile.AppendLine(b, &ev[0])
	b = append(b, "not json at all\n"...)
	b = profile.AppendLine(b, &ev[1])
	b = append(b, "\n   \r\n"...) // blank lines are not malformed
	b = append(b, `{"epoch":1}`+"\n"...)
	b = append(b, "\x00\x00\x00\x00\n"...) // zeros, as after a crash on some file systems
	b = append(b, `{"t":"span","attrs":`+strings.Repeat("[", 600)+"\n"...)
	// a line far longer than the read buffer
	big := profile.Event{T: profile.TypeSpan, Name: "big", Attrs: json.RawMessage(`{"s":"` + strings.Repeat("x", 600<<10) + `"}`)}
	b = profile.AppendLine(b, &big)
	b = profile.AppendLine(b, &ev[2])
	os.WriteFile(path, b, 0o644)
	out, st, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 || out[2].Name != "big" || len(out[2].Attrs) != 600<<10+8 || !reflect.DeepEqual(out[3], ev[2]) {
		t.Fatalf("%d events", len(out))
	}
	if st.Malformed != 4 || st.FirstMalformed != 2 || st.FirstError == "" || st.Lines != 8 || st.Torn {
		t.Errorf("stats %+v", st)
	}
}

func TestReadMissing(t *testing.T) {
	if _, _, err := ReadJournal(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing journal: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if evs, st, err := ReadJournal(empty); err != nil || len(evs) != 0 || st.Lines != 0 {
		t.Errorf("empty journal: %v %+v %v", evs, st, err)
	}
}

// The recorder writing through a journal: what a crash leaves is readable.
func TestRecorderIntoJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	w, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	r := profile.NewRecorder(w, profile.RecorderOptions{})
	r.RunStart("r", "s", "baseline", nil, nil)
	for i := range 5000 {
		r.Span(profile.StageTrain, profile.LaneCompute, 0, i, int64(i), 1)
	}
	if err := r.Close("", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs, st, err := ReadJournal(path)
	if err != nil || len(evs) != 5002 || st.Malformed != 0 {
		t.Fatalf("%d events, %+v, %v", len(evs), st, err)
	}
	s := profile.Summarize(evs)
	if s.Batches != 5000 || s.Status != profile.StatusOK {
		t.Errorf("summary %+v", s)
	}
}

func TestWriteEventsDoesNotAllocate(t *testing.T) {
	w, err := OpenJournal(filepath.Join(t.TempDir(), "j.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	evs := sampleEvents()[1:3]
	if n := testing.AllocsPerRun(1000, func() { w.WriteEvents(evs) }); n != 0 {
		t.Errorf("WriteEvents allocates %v times", n)
	}
}
