package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Sink receives recorded events in batches, in recording order. It is called
// from one goroutine at a time. The slice is only valid during the call.
// sessions.JournalWriter implements it.
type Sink interface {
	// WriteEvents writes a batch of events (buffering is allowed).
	WriteEvents(evs []Event) error
	// Flush makes everything written so far durable enough to be read by
	// another process (e.g. writes buffered bytes to the file).
	Flush() error
}

// RecorderOptions tune a Recorder. The zero value gives the defaults.
type RecorderOptions struct {
	// FlushInterval is how often the background writer hands pending events
	// to the sink and flushes it. Default 200 ms.
	FlushInterval time.Duration
	// BufferEvents is the capacity of each event buffer. Default 2048.
	BufferEvents int
	// Buffers is the number of buffers (one being filled, the others in
	// flight to the sink). When all are in flight, recording blocks until
	// the sink catches up rather than dropping events. Default 4, minimum 2.
	Buffers int
	// OnError, if set, is called (from the writer goroutine) with the first
	// error the sink returns.
	OnError func(error)
	// Usage adds to run_end what this process got from its host
	// (ProcessUsage since the recorder started): set it when the
	// recorder's process is the run's.
	Usage bool
}

// Recorder collects events from any number of goroutines and hands them to a
// Sink from a background goroutine. Recording a span does not allocate.
//
// A nil *Recorder is valid: every method does nothing (Now still tells
// time), so code can be instrumented unconditionally.
type Recorder struct {
	sink     Sink
	start    time.Time // monotonic origin of every event time
	interval time.Duration
	onError  func(error)
	usage    bool

	mu     sync.Mutex
	spare  sync.Cond // signaled when a buffer returns to r.free
	cur    []Event
	free   [][]Event
	closed bool

	flushMu sync.Mutex // serializes Flush and Close
	jobs    chan job
	ack     chan error
	done    chan struct{}

	errMu sync.Mutex
	err   error // first sink error

	// Events the sink took and refused (read and written by the writer
	// goroutine only).
	kept, lost int

	aggMu sync.Mutex
	agg   *Aggregator // every event handed to the sink
}

type job struct {
	evs   []Event // nil for a flush without pending events
	flush bool
	ack   bool
	end   *endJob
}

type endJob struct {
	status  Status
	err     error
	summary any
}

// discard is the sink of a recorder made with a nil sink.
type discard struct{}

func (discard) WriteEvents([]Event) error { return nil }
func (discard) Flush() error              { return nil }

// processStart is the time origin of a nil Recorder's Now.
var processStart = time.Now()

// NewRecorder starts a recorder writing to sink (nil: events are aggregated
// for Summary, then dropped). Its clock starts now: every
// time it reports is nanoseconds since this call. Close it to stop its
// writer goroutine.
func NewRecorder(sink Sink, opts RecorderOptions) *Recorder {
	if sink == nil {
		sink = discard{}
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 200 * time.Millisecond
	}
	if opts.BufferEvents <= 0 {
		opts.BufferEvents = 2048
	}
	if opts.Buffers < 2 {
		opts.Buffers = 4
	}
	r := &Recorder{
		sink:     sink,
		start:    time.Now(),
		interval: opts.FlushInterval,
		onError:  opts.OnError,
		usage:    opts.Usage,
		jobs:     make(chan job, opts.Buffers+2),
		ack:      make(chan error, 1),
		done:     make(chan struct{}),
		agg:      NewAggregator(),
	}
	r.spare.L = &r.mu
	r.cur = make([]Event, 0, opts.BufferEvents)
	for i := 1; i < opts.Buffers; i++ {
		r.free = append(r.free, make([]Event, 0, opts.BufferEvents))
	}
	go r.writer()
	return r
}

// Now returns nanoseconds since the recorder started, on the monotonic
// clock. For a nil recorder it is time since the process started.
func (r *Recorder) Now() int64 {
	if r == nil {
		return int64(time.Since(processStart))
	}
	return int64(time.Since(r.start))
}

// StartTime returns the wall-clock time the recorder's clock counts from.
func (r *Recorder) StartTime() time.Time {
	if r == nil {
		return processStart
	}
	return r.start
}

// Span records one timed stage that started at start (from Now) and lasted
// dur nanoseconds. It does not allocate.
func (r *Recorder) Span(name, lane string, epoch, batch int, start, dur int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if e := r.slotLocked(); e != nil { // a zeroed slot: set the span's fields only
		e.T, e.Name, e.Lane, e.Epoch, e.Batch, e.Start, e.Dur = TypeSpan, name, lane, epoch, batch, start, dur
	}
	r.mu.Unlock()
}

// SpanSince records a span from start (from Now) until now and returns now,
// which can start the next span.
func (r *Recorder) SpanSince(name, lane string, epoch, batch int, start int64) int64 {
	if r == nil {
		return 0
	}
	now := r.Now()
	r.Span(name, lane, epoch, batch, start, now-start)
	return now
}

// SpanAttrs records a span with attributes, a JSON object (see Attrs).
func (r *Recorder) SpanAttrs(name, lane string, epoch, batch int, start, dur int64, attrs json.RawMessage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if e := r.slotLocked(); e != nil {
		e.T, e.Name, e.Lane, e.Epoch, e.Batch, e.Start, e.Dur, e.Attrs = TypeSpan, name, lane, epoch, batch, start, dur, attrs
	}
	r.mu.Unlock()
}

// Mem records a batch's device memory: peak and live bytes, the budget and
// the bytes the memory guard predicted (0 if none).
func (r *Recorder) Mem(epoch, batch int, phase string, peak, live, budget, predicted int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if e := r.slotLocked(); e != nil {
		e.T, e.Epoch, e.Batch, e.Phase, e.Peak, e.Live, e.Budget, e.Predicted = TypeMem, epoch, batch, phase, peak, live, budget, predicted
	}
	r.mu.Unlock()
}

// Metric records a named value (loss, val_acc, lr, ...). Use batch -1 for
// per-epoch values by convention.
func (r *Recorder) Metric(name string, epoch, batch int, value float64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if e := r.slotLocked(); e != nil {
		e.T, e.Name, e.Epoch, e.Batch, e.Value = TypeMetric, name, epoch, batch, value
	}
	r.mu.Unlock()
}

// Cache records a batch's feature-cache outcome: input rows found in the
// device cache (hits), rows gathered from host memory (misses), and the
// bytes copied host-to-device for them.
func (r *Recorder) Cache(epoch, batch int, hits, misses, bytesH2D int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if e := r.slotLocked(); e != nil {
		e.T, e.Epoch, e.Batch, e.Hits, e.Misses, e.BytesH2D = TypeCache, epoch, batch, hits, misses, bytesH2D
	}
	r.mu.Unlock()
}

// Emit records any event as given (gpu, oom, stale, hist_err, ...).
func (r *Recorder) Emit(e Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if p := r.slotLocked(); p != nil {
		*p = e
	}
	r.mu.Unlock()
}

// RunStart records the run_start event: schema version, the wall-clock time
// of the recorder's start, and what the run is; adjusted lists what the
// launcher changed in its config (Event.Adjusted).
func (r *Recorder) RunStart(run, session, variant string, config json.RawMessage, host *Host, adjusted ...string) {
	if r == nil {
		return
	}
	r.Emit(Event{
		T: TypeRunStart, V: SchemaVersion, Run: run, Session: session, Variant: variant,
		Config: config, Host: host, Wall: r.start.UTC().Format(time.RFC3339Nano), Adjusted: adjusted,
	})
}

// slotLocked returns the next free slot of the current buffer, handing a
// full buffer to the writer first. nil after Close. r.mu must be held.
// The slot is zeroed (buffers are made zeroed and the writer clears them
// before it returns them), so the hot recording methods set only their
// own fields instead of writing a whole Event.
func (r *Recorder) slotLocked() *Event {
	for len(r.cur) == cap(r.cur) {
		if r.closed {
			return nil
		}
		if len(r.free) == 0 {
			r.spare.Wait() // every buffer is in flight: wait for the sink
			continue
		}
		r.rotateLocked(false)
	}
	n := len(r.cur)
	r.cur = r.cur[:n+1]
	return &r.cur[n]
}

// rotateLocked sends the current buffer to the writer and takes a free one;
// r.free must not be empty. Sending never blocks: at most one job per buffer
// plus one flush or end job are ever queued.
func (r *Recorder) rotateLocked(flush bool) {
	full := r.cur
	r.cur = r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	r.jobs <- job{evs: full, flush: flush}
}

// Flush hands everything recorded so far to the sink, flushes the sink and
// returns once that is done, with the first error the sink ever returned.
// Call it at every epoch's end; the background writer also flushes on its
// own every FlushInterval.
func (r *Recorder) Flush() error {
	if r == nil {
		return nil
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.Err()
	}
	var j job
	if len(r.cur) > 0 {
		for len(r.free) == 0 {
			r.spare.Wait()
		}
		j.evs = r.cur
		r.cur = r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
	}
	j.flush, j.ack = true, true
	r.jobs <- j
	r.mu.Unlock()
	<-r.ack
	return r.Err()
}

// Close records run_end with status, err's message and summary, hands
// everything to the sink, flushes it and stops the writer. An empty status
// is derived from err: nil gives ok, context.Canceled canceled, anything
// else failed. When the sink refused events before, run_end's status is
// StatusPartial and its error says how many events were kept and lost and
// how the run ended. A nil summary is replaced by the Summary of every
// recorded event. Close does not close the sink (its owner does). It returns the
// first sink error, or an error encoding the summary. Later calls return
// the same error and record nothing.
func (r *Recorder) Close(status Status, err error, summary any) error {
	if r == nil {
		return nil
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.Err()
	}
	r.closed = true
	r.spare.Broadcast() // recorders waiting for a buffer give up
	j := job{evs: r.cur, flush: true, ack: true, end: &endJob{status: status, err: err, summary: summary}}
	r.cur = nil
	r.jobs <- j
	r.mu.Unlock()
	<-r.ack
	<-r.done
	return r.Err()
}

// Err returns the first error the sink returned, if any.
func (r *Recorder) Err() error {
	if r == nil {
		return nil
	}
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.err
}

func (r *Recorder) setErr(err error) {
	if err == nil {
		return
	}
	r.errMu.Lock()
	first := r.err == nil
	if first {
		r.err = err
	}
	r.errMu.Unlock()
	if first && r.onError != nil {
		r.onError(err)
	}
}

// Summary returns the aggregation of every event handed to the sink so far
// (everything recorded before the last flush).
func (r *Recorder) Summary() Summary {
	if r == nil {
		return Summary{}
	}
	r.aggMu.Lock()
	defer r.aggMu.Unlock()
	return r.agg.Summary()
}

// writer is the background goroutine: it writes jobs in order, returns
// buffers to the free list and flushes on a timer.
func (r *Recorder) writer() {
	defer close(r.done)
	tick := time.NewTicker(r.interval)
	defer tick.Stop()
	dirty := false
	for {
		select {
		case j := <-r.jobs:
			if j.evs != nil {
				r.write(j.evs)
				dirty = true
				clear(j.evs) // slots are handed out zeroed (slotLocked)
				r.mu.Lock()
				if j.end == nil {
					r.free = append(r.free, j.evs[:0])
					r.spare.Broadcast()
				}
				r.mu.Unlock()
			}
			if j.end != nil {
				r.writeEnd(j.end)
				dirty = true
			}
			if j.flush && dirty {
				r.setErr(r.sink.Flush())
				dirty = false
			}
			if j.ack {
				r.ack <- nil
			}
			if j.end != nil {
				return
			}
		case <-tick.C:
			r.mu.Lock()
			if len(r.cur) > 0 && len(r.free) > 0 && !r.closed {
				r.rotateLocked(true)
				r.mu.Unlock()
				continue // the job is next in the queue, after older ones
			}
			r.mu.Unlock()
			if dirty {
				r.setErr(r.sink.Flush())
				dirty = false
			}
		}
	}
}

func (r *Recorder) write(evs []Event) {
	r.aggMu.Lock()
	for i := range evs {
		r.agg.add(&evs[i])
	}
	r.aggMu.Unlock()
	if err := r.sink.WriteEvents(evs); err != nil {
		r.lost += len(evs)
		r.setErr(err)
	} else {
		r.kept += len(evs)
	}
}

// incomplete is the error text of a run whose journal lost events (a
// sink error before run_end): what was kept and lost, why, and how the
// run itself ended; "" when nothing was lost.
func (r *Recorder) incomplete(status Status) string {
	err := r.Err()
	if err == nil {
		return ""
	}
	return fmt.Sprintf("journal incomplete: %d of %d events kept, %d lost (%v); the run itself ended %s",
		r.kept, r.kept+r.lost, r.lost, err, status)
}

func (r *Recorder) writeEnd(end *endJob) {
	status := end.status
	if status == "" {
		switch {
		case end.err == nil:
			status = StatusOK
		case errors.Is(end.err, context.Canceled):
			status = StatusCanceled
		default:
			status = StatusFailed
		}
	}
	e := Event{T: TypeRunEnd, Status: status}
	if r.usage {
		u := ProcessUsage(r.start)
		e.Usage = &u
	}
	if end.err != nil {
		e.Error = end.err.Error()
	}
	// A journal that lost events is partial whatever the run did: its
	// figures are not the run's.
	if text := r.incomplete(status); text != "" {
		e.Status = StatusPartial
		e.Error = strings.TrimSuffix(text+"; "+e.Error, "; ")
	}
	summary := end.summary
	if summary == nil {
		r.aggMu.Lock()
		s := r.agg.Summary()
		r.aggMu.Unlock()
		s.Status, s.Error = e.Status, e.Error
		summary = s
	}
	if raw, ok := summary.(json.RawMessage); ok {
		e.Summary = raw
	} else if b, err := json.Marshal(summary); err != nil {
		r.setErr(fmt.Errorf("encode run summary: %w", err))
	} else {
		e.Summary = b
	}
	r.write([]Event{e})
}
