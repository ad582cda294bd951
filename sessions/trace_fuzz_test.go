package sessions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/profile"
)

// FuzzBuildTrace: journals of any content (the fuzz bytes, split at lines
// "---" into rank 0's journal and further ranks') export, with and without
// wall-clock placement, as a Chrome trace that is valid JSON in UTF-8 with
// one process per rank journal, and the stats count no more spans and
// damaged lines than the journals have lines. Run:
// go test -run x -fuzz FuzzBuildTrace -fuzztime 20s ./sessions/
func FuzzBuildTrace(f *testing.F) {
	var seed []byte
	for _, e := range []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "ddp", World: 2, Wall: "2026-11-22T15:30:45.123456789Z"},
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Start: 10, Dur: 100},
		{T: profile.TypeMetric, Name: "loss", Value: 0.5},
		{T: profile.TypeRunEnd, Status: profile.StatusOK},
	} {
		seed = profile.AppendLine(seed, &e)
	}
	f.Add(seed)
	two := append(append(bytes.Clone(seed), "---\n"...),
		`{"t":"run_start","v":1,"run":"ddp","rank":1,"world":2,"wall":"0001-01-01T00:00:00Z"}`+"\n"+
			`{"t":"span","name":"train","lane":"compute","start":9223372036854775000,"dur":5}`+"\n"...)
	f.Add(two)
	f.Add([]byte("---\n---\n{\"t\":\"run_start\",\"wall\":\"9999-12-31T23:59:59.999999999Z\"}\nnot json\n\xff\n"))
	st, err := Open(filepath.Join(f.TempDir(), "root"))
	if err != nil {
		f.Fatal(err)
	}
	s, err := st.Create(SessionMeta{ID: "20261122-153045-ab12", Variants: []Variant{{Name: "ddp"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parts := bytes.Split(b, []byte("---\n"))
		if len(parts) > 8 {
			parts = parts[:8]
		}
		ents, _ := os.ReadDir(s.RunsDir())
		for _, e := range ents {
			os.Remove(filepath.Join(s.RunsDir(), e.Name()))
		}
		lines := 0
		for r, p := range parts {
			if err := os.WriteFile(s.RankJournalPath("ddp", r), p, 0o600); err != nil {
				t.Fatal(err)
			}
			lines += bytes.Count(p, []byte("\n")) + 1
		}
		for _, wall := range []bool{false, true} {
			tr, stats, err := BuildTrace([]RunRef{{Session: s, Run: "ddp"}}, TraceOptions{WallClock: wall})
			if err != nil {
				t.Fatal(err)
			}
			if stats.Runs != 1 || stats.Spans+stats.Malformed > lines {
				t.Fatalf("stats %+v for %d lines", stats, lines)
			}
			var out bytes.Buffer
			if _, err := tr.WriteTo(&out); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(out.Bytes()) || !utf8.Valid(out.Bytes()) {
				t.Fatalf("not valid JSON in UTF-8:\n%s", out.Bytes())
			}
			var doc struct {
				TraceEvents []struct {
					Name string `json:"name"`
					Pid  int    `json:"pid"`
				} `json:"traceEvents"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			procs := 0
			for _, e := range doc.TraceEvents {
				if e.Name == "process_name" {
					procs++
				}
			}
			if procs != len(parts) {
				t.Fatalf("%d processes for %d rank journals", procs, len(parts))
			}
		}
	})
}
