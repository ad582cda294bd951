//go:build cuda

package cuda

import (
	"fmt"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"github.com/gnnscope/gnnscope/gnn/device"
)

// markRec is a recorded timestamp: its event and the anchor that maps it
// onto the host clock.
type markRec struct {
	ev *evt
	a  *anchor
}

// pendingSpan waits for its two marks to complete.
type pendingSpan struct {
	begin, end markRec
	fn         func(start, dur int64)
}

// pollEvery is how often the device looks for completed spans.
const pollEvery = 20 * time.Millisecond

// SetClock sets the host clock spans are reported on (see device.Async).
func (d *Device) SetClock(now func() int64) {
	if now == nil {
		return
	}
	d.enter()
	defer d.leave()
	d.must("renewing the clock anchor", d.clock.setNow(now))
}

// streamByName returns one of the device's streams.
func (d *Device) streamByName(name string) cudrv.Stream {
	switch name {
	case device.StreamCompute:
		return d.compute
	case device.StreamCopy:
		return d.copyS
	case device.StreamHistory:
		return d.history
	}
	panic(fmt.Sprintf("cuda: unknown stream %q", name))
}

// Mark queues a timestamp on the named stream (see device.Async).
func (d *Device) Mark(stream string) device.Mark {
	s := d.streamByName(stream)
	d.enter()
	defer d.leave()
	m := d.markOn(s)
	m.Stream = stream
	return m
}

// markOn records a timing event on s (context current).
func (d *Device) markOn(s cudrv.Stream) device.Mark {
	a, err := d.clock.acquire()
	d.must("clock anchor", err)
	e := d.record(s, true)
	d.spanMu.Lock()
	d.nextMark++
	id := d.nextMark
	d.marks[id] = markRec{ev: e, a: a}
	d.spanMu.Unlock()
	return device.Mark{ID: id}
}

// Span reports the work between two marks once it has run (see
// device.Async). Unknown marks are ignored.
func (d *Device) Span(begin, end device.Mark, fn func(start, dur int64)) { d.spanOn(begin, end, fn) }

func (d *Device) spanOn(begin, end device.Mark, fn func(start, dur int64)) {
	d.spanMu.Lock()
	b, okb := d.marks[begin.ID]
	e, oke := d.marks[end.ID]
	delete(d.marks, begin.ID)
	delete(d.marks, end.ID)
	switch {
	case okb && oke && fn != nil:
		d.spans = append(d.spans, pendingSpan{begin: b, end: e, fn: fn})
		d.spanMu.Unlock()
		return
	}
	d.spanMu.Unlock()
	for _, m := range []markRec{b, e} {
		if m.ev != nil {
			d.putEvent(m.ev)
			d.clock.release(m.a)
		}
	}
}

// poll reports completed spans and renews the clock anchor until Close.
func (d *Device) poll() {
	defer close(d.polled)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		d.drainSpans(false)
		d.enter()
		err := d.clock.maybeRenew()
		d.leave()
		d.must("renewing the clock anchor", err)
	}
}

// drainSpans reports the spans whose marks have completed (all of them,
// waiting, when wait is set).
func (d *Device) drainSpans(wait bool) {
	d.spanMu.Lock()
	spans := d.spans
	d.spans = nil
	d.spanMu.Unlock()
	if len(spans) == 0 {
		return
	}
	d.enter()
	var keep []pendingSpan
	type done struct {
		fn         func(start, dur int64)
		start, end int64
	}
	var ready []done
	for _, s := range spans {
		if wait {
			d.must("waiting for a mark", s.end.ev.e.Synchronize())
		} else if s.end.ev.e.Query() != nil || s.begin.ev.e.Query() != nil {
			keep = append(keep, s)
			continue
		}
		start, err := d.clock.hostTime(s.begin.a, s.begin.ev)
		d.must("timing a span", err)
		end, err := d.clock.hostTime(s.begin.a, s.end.ev)
		d.must("timing a span", err)
		ready = append(ready, done{s.fn, start, end})
		for _, m := range []markRec{s.begin, s.end} {
			d.putEvent(m.ev)
			d.clock.release(m.a)
		}
	}
	d.leave()
	if len(keep) > 0 {
		d.spanMu.Lock()
		d.spans = append(keep, d.spans...)
		d.spanMu.Unlock()
	}
	for _, r := range ready {
		r.fn(r.start, max(r.end-r.start, 0))
	}
}
