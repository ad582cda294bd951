//go:build cuda

package cuda

import "github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

// evt is a pooled CUDA event.
type evt struct {
	e      cudrv.Event
	timing bool
}

// event takes an idle event from the pool (creating one if needed).
func (d *Device) event(timing bool) *evt {
	d.evMu.Lock()
	pool := &d.syncEvents
	if timing {
		pool = &d.timeEvents
	}
	if n := len(*pool); n > 0 {
		e := (*pool)[n-1]
		*pool = (*pool)[:n-1]
		d.evMu.Unlock()
		return e
	}
	d.evMu.Unlock()
	e, err := cudrv.NewEvent(timing)
	d.must("creating an event", err)
	return &evt{e: e, timing: timing}
}

// putEvent returns an event to the pool.
func (d *Device) putEvent(e *evt) {
	if e == nil {
		return
	}
	d.evMu.Lock()
	if e.timing {
		d.timeEvents = append(d.timeEvents, e)
	} else {
		d.syncEvents = append(d.syncEvents, e)
	}
	d.evMu.Unlock()
}

// record records a new event on s.
func (d *Device) record(s cudrv.Stream, timing bool) *evt {
	e := d.event(timing)
	d.must("recording an event", e.e.Record(s))
	return e
}

// waitFor makes stream s wait for the work queued on stream from so far.
func (d *Device) waitFor(s, from cudrv.Stream) {
	e := d.record(from, false)
	d.must("stream wait", s.Wait(e.e))
	d.putEvent(e) // a wait captures the event's state when it is queued
}

// syncStreams waits for every stream.
func (d *Device) syncStreams() error {
	var first error
	for _, s := range []cudrv.Stream{d.compute, d.copyS, d.history} {
		if err := s.Synchronize(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SyncPinned waits for the history stream, where every copy and kernel
// that reads or writes page-locked memory runs (see device.PinnedHost).
func (d *Device) SyncPinned() {
	d.enter()
	d.must("synchronizing the history stream", d.history.Synchronize())
	d.leave()
}

// Sync waits for all queued work and reports the spans it completes.
func (d *Device) Sync() {
	d.enter()
	err := d.syncStreams()
	d.leave()
	d.must("synchronize", err)
	d.drainSpans(false)
}
