package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// memSink collects events; it is safe to inspect while the recorder runs.
type memSink struct {
	mu       sync.Mutex
	events   []Event
	batches  int
	flushes  int
	flushed  int // events written as of the last Flush
	writeErr error
	delay    time.Duration
}

func (s *memSink) WriteEvents(evs []Event) error {
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, evs...)
	s.batches++
	return s.writeErr
}

func (s *memSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushes++
	s.flushed = len(s.events)
	return nil
}

func (s *memSink) snapshot() (events []Event, flushed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...), s.flushed
}

func TestNilRecorderIsSafe(t *testing.T) {
	var r *Recorder
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1)
	r.SpanAttrs(StageTrain, LaneCompute, 0, 0, 0, 1, Attrs(Attr{"a", 1}))
	_ = r.SpanSince(StageTrain, LaneCompute, 0, 0, 0)
	r.Mem(0, 0, PhaseTrain, 1, 2, 3, 4)
	r.Metric("loss", 0, 0, 1)
	r.Emit(Event{T: TypeGPU})
	r.RunStart("r", "s", "v", nil, nil)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if a, b := r.Now(), r.Now(); b < a || a <= 0 {
		t.Errorf("nil Now not monotonic: %d %d", a, b)
	}
	_ = r.StartTime()
	if s := r.Summary(); s.Events != 0 {
		t.Error("nil summary")
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(StatusOK, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderFlushAndClose(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{FlushInterval: time.Hour, BufferEvents: 8})
	host := LocalHost()
	r.RunStart("base", "sess", "baseline", json.RawMessage(`{"x":1}`), &host)
	for b := 0; b < 20; b++ {
		s := r.Now()
		r.Span(StageSample, LaneCompute, 0, b, s, 10)
		r.Span(StageTrain, LaneCompute, 0, b, s+10, 30)
		r.Mem(0, b, PhaseTrain, 100, 50, 1000, 0)
	}
	r.Metric("loss", 0, -1, 0.5)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	evs, flushed := sink.snapshot()
	if len(evs) != 62 || flushed != 62 {
		t.Fatalf("after Flush: %d events, %d flushed; want 62", len(evs), flushed)
	}
	if evs[0].T != TypeRunStart || evs[0].V != SchemaVersion || evs[0].Wall == "" || evs[0].Host.Cores == 0 {
		t.Errorf("run_start %+v", evs[0])
	}
	if wall, err := evs[0].WallTime(); err != nil || wall.Sub(r.StartTime()).Abs() > time.Millisecond {
		t.Errorf("wall %v %v", wall, err)
	}
	if sink.batches < 62/8 {
		t.Errorf("only %d batches: buffers not handed over when full", sink.batches)
	}
	if s := r.Summary(); s.Batches != 20 || s.Metrics["loss"] != 0.5 {
		t.Errorf("live summary %+v", s)
	}
	if err := r.Close("", nil, nil); err != nil {
		t.Fatal(err)
	}
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1) // after Close: dropped
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(StatusFailed, errors.New("again"), nil); err != nil {
		t.Fatal(err)
	}
	evs, flushed = sink.snapshot()
	if len(evs) != 63 || flushed != 63 {
		t.Fatalf("after Close: %d events, %d flushed; want 63", len(evs), flushed)
	}
	end := evs[62]
	if end.T != TypeRunEnd || end.Status != StatusOK || end.Error != "" || end.Usage != nil {
		t.Fatalf("run_end %+v (no usage without RecorderOptions.Usage)", end)
	}
	var s Summary
	if err := json.Unmarshal(end.Summary, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusOK || s.Batches != 20 || s.Counts[TypeSpan] != 40 || s.Metrics["loss"] != 0.5 || s.Run != "base" {
		t.Errorf("summary %+v", s)
	}
	if want := Summarize(evs[:62]); s.WallS != want.WallS || s.DataWaitS != want.DataWaitS {
		t.Errorf("summary differs from the journal's: %+v vs %+v", s, want)
	}
}

func TestCloseStatusAndSummary(t *testing.T) {
	for _, c := range []struct {
		status Status
		err    error
		want   Status
	}{
		{"", nil, StatusOK},
		{"", fmt.Errorf("epoch 3: %w", context.Canceled), StatusCanceled},
		{"", errors.New("boom"), StatusFailed},
		{StatusOOM, errors.New("out of memory"), StatusOOM},
	} {
		sink := &memSink{}
		r := NewRecorder(sink, RecorderOptions{})
		r.Metric("loss", 0, 0, 0)
		if err := r.Close(c.status, c.err, map[string]int{"n": 1}); err != nil {
			t.Fatal(err)
		}
		evs, _ := sink.snapshot()
		end := evs[len(evs)-1]
		if end.Status != c.want || (c.err != nil && end.Error != c.err.Error()) || string(end.Summary) != `{"n":1}` {
			t.Errorf("%v: run_end %+v", c, end)
		}
	}
	// a summary that cannot be encoded is reported, the run_end still written
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{})
	if err := r.Close(StatusOK, nil, func() {}); err == nil {
		t.Error("no error for an unencodable summary")
	}
	if evs, _ := sink.snapshot(); len(evs) != 1 || evs[0].T != TypeRunEnd {
		t.Errorf("events %+v", evs)
	}
	// a NaN loss survives the default summary
	sink = &memSink{}
	r = NewRecorder(sink, RecorderOptions{})
	r.Metric("loss", 0, 0, nan())
	if err := r.Close("", nil, nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := sink.snapshot()
	var s Summary
	if err := json.Unmarshal(evs[1].Summary, &s); err != nil || s.Metrics["loss"] == s.Metrics["loss"] {
		t.Errorf("NaN loss: %s %v", evs[1].Summary, err)
	}
}

func nan() float64 { var z float64; return z / z }

func TestFlushIntervalHonored(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{FlushInterval: 20 * time.Millisecond})
	defer r.Close(StatusOK, nil, nil)
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1)
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, flushed := sink.snapshot(); flushed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("span not flushed by the background writer within 2 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// and again later: the timer keeps running
	r.Span(StageTrain, LaneCompute, 0, 1, 1, 1)
	for {
		if _, flushed := sink.snapshot(); flushed == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second span not flushed within 2 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDefaultFlushInterval(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{})
	defer r.Close(StatusOK, nil, nil)
	if r.interval != 200*time.Millisecond {
		t.Fatalf("default interval %v", r.interval)
	}
}

// Many goroutines record concurrently through tiny buffers and a slow sink:
// nothing is lost, and each goroutine's events keep their order.
func TestRecorderConcurrent(t *testing.T) {
	sink := &memSink{delay: 20 * time.Microsecond}
	r := NewRecorder(sink, RecorderOptions{FlushInterval: time.Millisecond, BufferEvents: 32, Buffers: 2})
	const workers, per = 8, 1000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lane := SamplerLane(w)
			for i := range per {
				r.Span(StageSample, lane, 0, i, r.Now(), 1)
				if i%300 == 0 {
					if err := r.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(StatusOK, nil, nil); err != nil {
		t.Fatal(err)
	}
	evs, flushed := sink.snapshot()
	if len(evs) != workers*per+1 || flushed != len(evs) {
		t.Fatalf("%d events (%d flushed), want %d", len(evs), flushed, workers*per+1)
	}
	next := map[string]int{}
	for _, e := range evs[:len(evs)-1] {
		if e.Batch != next[e.Lane] {
			t.Fatalf("lane %s: batch %d, want %d", e.Lane, e.Batch, next[e.Lane])
		}
		next[e.Lane]++
	}
}

// Close while other goroutines are blocked waiting for a buffer must not
// deadlock; they drop their events.
func TestCloseWhileRecording(t *testing.T) {
	sink := &memSink{delay: time.Millisecond}
	r := NewRecorder(sink, RecorderOptions{BufferEvents: 4, Buffers: 2})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				r.Span(StageTrain, LaneCompute, 0, i, 0, 1)
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	if err := r.Close(StatusCanceled, nil, nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	evs, _ := sink.snapshot()
	if evs[len(evs)-1].T != TypeRunEnd {
		t.Fatal("run_end is not last")
	}
}

func TestSinkErrorReported(t *testing.T) {
	boom := errors.New("disk full")
	sink := &memSink{writeErr: boom}
	var got []error
	r := NewRecorder(sink, RecorderOptions{OnError: func(err error) { got = append(got, err) }})
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1)
	if err := r.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush: %v", err)
	}
	if err := r.Close(StatusOK, nil, nil); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("OnError called %d times", len(got))
	}
}

func TestSpanDoesNotAllocate(t *testing.T) {
	r := NewRecorder(nopSink{}, RecorderOptions{BufferEvents: 64})
	defer r.Close(StatusOK, nil, nil)
	lane := SamplerLane(2)
	n := testing.AllocsPerRun(1000, func() {
		r.Span(StageSample, lane, 1, 2, r.Now(), 3)
		r.Mem(1, 2, PhaseTrain, 1, 2, 3, 4)
		r.Metric("loss", 1, 2, 0.5)
	})
	if n != 0 {
		t.Errorf("recording allocates %v times per call", n)
	}
}

// nopSink discards events.
type nopSink struct{}

func (nopSink) WriteEvents([]Event) error { return nil }
func (nopSink) Flush() error              { return nil }

func TestNilSink(t *testing.T) {
	r := NewRecorder(nil, RecorderOptions{})
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 5)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if s := r.Summary(); s.Batches != 1 {
		t.Errorf("summary %+v", s)
	}
	if err := r.Close(StatusOK, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderUsage(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{Usage: true})
	r.RunStart("base", "sess", "baseline", nil, nil)
	x := 0.0
	for i := 0; i < 3e6; i++ { // burn some CPU
		x += float64(i)
	}
	if err := r.Close(StatusOK, nil, nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := sink.snapshot()
	end := evs[len(evs)-1]
	u := end.Usage
	if u == nil || x == 0 {
		t.Fatalf("run_end without usage: %+v", end)
	}
	if u.WallS <= 0 || u.Threads < 1 || u.CPUS < 0 || u.WaitS < 0 || u.Load < 0 {
		t.Errorf("usage %+v", *u)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil && u.CPUS <= 0 {
		t.Errorf("no CPU time on a system with /proc: %+v", *u)
	}
	b := AppendEvent(nil, &end)
	var back Event
	err := DecodeEvent(b, &back)
	if err != nil || back.Usage == nil || *back.Usage != *u {
		t.Errorf("round trip of %s: %+v %v", b, back.Usage, err)
	}
}

// TestRecorderReusedSlotsCarryNothing fills every buffer with events that
// set many fields, then records spans, mem and metric events into the
// reused slots: each must hold its own fields only.
func TestRecorderReusedSlotsCarryNothing(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{FlushInterval: time.Hour, BufferEvents: 4, Buffers: 2})
	full := Event{T: TypeOOM, Run: "r", Adjusted: []string{"a"}, Name: "n", Lane: "l", Attrs: json.RawMessage(`{}`),
		Phase: "p", Peak: 1, Live: 2, Budget: 3, Predicted: 4, Ts: 5, Used: 6, Total: 7, Util: 8, Requested: 9,
		Action: ActionAbort, Actual: 10, Layer: 11, Mean: 12, Max: 13, Hist: []int64{1}, RelErr: 14, Value: 15,
		Status: StatusOK, Error: "e", Usage: &Usage{CPUS: 1}}
	for range 16 {
		r.Emit(full)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Epoch: 1, Batch: 2, Start: 3, Dur: 4},
		{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Epoch: 1, Batch: 2, Start: 3, Dur: 4, Attrs: json.RawMessage(`{"k":1}`)},
		{T: TypeMem, Epoch: 1, Batch: 2, Phase: PhaseTrain, Peak: 5, Live: 6, Budget: 7, Predicted: 8},
		{T: TypeMetric, Name: "loss", Epoch: 1, Batch: -1, Value: 0.5},
	}
	for range 4 {
		r.Span(StageTrain, LaneCompute, 1, 2, 3, 4)
		r.SpanAttrs(StageTrain, LaneCompute, 1, 2, 3, 4, json.RawMessage(`{"k":1}`))
		r.Mem(1, 2, PhaseTrain, 5, 6, 7, 8)
		r.Metric("loss", 1, -1, 0.5)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	evs, _ := sink.snapshot()
	got := evs[16:]
	if len(got) != 16 {
		t.Fatalf("%d events after the full ones, want 16", len(got))
	}
	for i, e := range got {
		if w := want[i%4]; !reflect.DeepEqual(e, w) {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
	}
}

// fullForAWhile refuses writes while full is set, as a disk that fills
// and is freed.
type fullForAWhile struct {
	memSink
	full bool
}

func (s *fullForAWhile) WriteEvents(evs []Event) error {
	s.mu.Lock()
	full := s.full
	s.mu.Unlock()
	if full {
		return errors.New("write journal: no space left on device")
	}
	return s.memSink.WriteEvents(evs)
}

// TestLostEventsMakeRunPartial: events the sink refused (a full disk,
// freed before the end) make run_end partial, whatever the run's own
// status, with what was kept and lost and how the run ended.
func TestLostEventsMakeRunPartial(t *testing.T) {
	sink := &fullForAWhile{}
	r := NewRecorder(sink, RecorderOptions{})
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1)
	r.Flush()
	sink.mu.Lock()
	sink.full = true
	sink.mu.Unlock()
	r.Span(StageTrain, LaneCompute, 1, 0, 0, 1)
	r.Span(StageTrain, LaneCompute, 1, 1, 0, 1)
	r.Flush()
	sink.mu.Lock()
	sink.full = false
	sink.mu.Unlock()
	if err := r.Close(StatusOK, nil, nil); err == nil {
		t.Fatal("Close reported no error")
	}
	evs, _ := sink.snapshot()
	end := evs[len(evs)-1]
	if end.T != TypeRunEnd || end.Status != StatusPartial {
		t.Fatalf("last event %+v", end)
	}
	for _, want := range []string{"1 of 3 events kept, 2 lost", "no space left", "the run itself ended ok"} {
		if !strings.Contains(end.Error, want) {
			t.Errorf("run_end error %q lacks %q", end.Error, want)
		}
	}
}

// TestNothingLostStaysOK: a sink that took everything leaves the status.
func TestNothingLostStaysOK(t *testing.T) {
	sink := &memSink{}
	r := NewRecorder(sink, RecorderOptions{})
	r.Span(StageTrain, LaneCompute, 0, 0, 0, 1)
	if err := r.Close(StatusCanceled, nil, nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := sink.snapshot()
	if end := evs[len(evs)-1]; end.Status != StatusCanceled || end.Error != "" {
		t.Fatalf("run_end %+v", end)
	}
}
