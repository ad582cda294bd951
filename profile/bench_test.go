package profile

import (
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkSpan measures recording one span (the hot path); run with
// -benchmem: it does not allocate.
func BenchmarkSpan(b *testing.B) {
	r := NewRecorder(nopSink{}, RecorderOptions{})
	defer r.Close(StatusOK, nil, nil)
	lane := SamplerLane(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.Span(StageSample, lane, 1, i, int64(i), 1000)
	}
}

// BenchmarkSpanParallel records from GOMAXPROCS goroutines at once.
func BenchmarkSpanParallel(b *testing.B) {
	r := NewRecorder(nopSink{}, RecorderOptions{})
	defer r.Close(StatusOK, nil, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Span(StageTrain, LaneCompute, 1, i, int64(i), 1000)
			i++
		}
	})
}

// encodeSink encodes events as JSON Lines into w, like the journal writer.
type encodeSink struct {
	w   io.Writer
	buf []byte
}

func (s *encodeSink) WriteEvents(evs []Event) error {
	s.buf = s.buf[:0]
	for i := range evs {
		s.buf = AppendLine(s.buf, &evs[i])
	}
	_, err := s.w.Write(s.buf)
	return err
}

func (s *encodeSink) Flush() error { return nil }

// BenchmarkRecorderEncode measures end-to-end throughput: recording spans
// plus the background writer encoding them to JSON into io.Discard. The
// events/s metric counts events that reached the sink.
func BenchmarkRecorderEncode(b *testing.B) {
	r := NewRecorder(&encodeSink{w: io.Discard}, RecorderOptions{})
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		r.Span(StageTrain, LaneCompute, 3, i, int64(i)*1000, 123456)
		n++
	}
	if err := r.Close(StatusOK, nil, json.RawMessage(`{}`)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkAppendEvent(b *testing.B) {
	e := Event{T: TypeSpan, Name: StageTransfer, Lane: SamplerLane(3), Epoch: 12, Batch: 345, Start: 123456789012, Dur: 4567890}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendLine(buf[:0], &e)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeEvent(b *testing.B) {
	e := Event{T: TypeSpan, Name: StageTransfer, Lane: SamplerLane(3), Epoch: 12, Batch: 345, Start: 123456789012, Dur: 4567890}
	line := AppendLine(nil, &e)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	var out Event
	for b.Loop() {
		if err := DecodeEvent(line, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEventStd is encoding/json on the same line, for comparison.
func BenchmarkDecodeEventStd(b *testing.B) {
	type plain struct {
		T     string `json:"t"`
		Name  string `json:"name"`
		Lane  string `json:"lane"`
		Epoch int    `json:"epoch"`
		Batch int    `json:"batch"`
		Start int64  `json:"start"`
		Dur   int64  `json:"dur"`
	}
	e := Event{T: TypeSpan, Name: StageTransfer, Lane: SamplerLane(3), Epoch: 12, Batch: 345, Start: 123456789012, Dur: 4567890}
	line := AppendLine(nil, &e)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	var out plain
	for b.Loop() {
		if err := json.Unmarshal(line, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAggregatorAdd(b *testing.B) {
	a := NewAggregator()
	e := Event{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Epoch: 1, Start: 1, Dur: 2}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Batch = i
		a.add(&e)
	}
}
