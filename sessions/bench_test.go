package sessions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// BenchmarkRecorderJournal measures recording spans through a Recorder into
// a real journal file; events/s counts events that reached the file.
func BenchmarkRecorderJournal(b *testing.B) {
	w, err := OpenJournal(filepath.Join(b.TempDir(), "j.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	r := profile.NewRecorder(w, profile.RecorderOptions{})
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		r.Span(profile.StageTrain, profile.LaneCompute, 3, i, int64(i)*1000, 123456)
		n++
	}
	if err := r.Close(profile.StatusOK, nil, nil); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReadJournal measures reading a journal of 100k spans.
func BenchmarkReadJournal(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.jsonl")
	var buf []byte
	for i := range 100000 {
		e := profile.Event{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.SamplerLane(i % 4), Epoch: i / 1000, Batch: i % 1000, Start: int64(i) * 1000, Dur: 900}
		buf = profile.AppendLine(buf, &e)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		evs, _, err := ReadJournal(path)
		if err != nil || len(evs) != 100000 {
			b.Fatal(len(evs), err)
		}
	}
	b.ReportMetric(100000*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
