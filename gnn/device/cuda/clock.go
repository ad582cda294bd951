package cuda

import (
	"math"
	"sync"
)

// Device timestamps onto the host clock. CUDA events give only the time
// between two events (cuEventElapsedTime, float milliseconds, about half a
// microsecond of resolution), so the device keeps an anchor: an event
// recorded on an otherwise idle stream and waited for at once, whose host
// time is known to within the record-to-wait latency. A mark's host time is
// the anchor's plus the time elapsed from the anchor's event to the mark's.
// The anchor is renewed every few seconds: the elapsed time is a float32 of
// milliseconds, whose resolution degrades as it grows (7.8 µs at 100 s).

// clockDriver records anchor events for eventClock; the CUDA device
// implements it, tests with a fake.
type clockDriver interface {
	// anchorEvent records an event on an idle stream and waits for it,
	// returning the event and the times on now just before recording and
	// just after the wait returned.
	anchorEvent(now func() int64) (ev fence, before, after int64, err error)
	// elapsedMs returns the milliseconds from event from to event to (both
	// completed; negative when to came first).
	elapsedMs(from, to fence) (float64, error)
	// releaseEvent returns an anchor event no longer needed.
	releaseEvent(ev fence)
}

// anchor ties one device event to the host clock.
type anchor struct {
	host int64 // host time of the event (midpoint of record and wait)
	slop int64 // half the record-to-wait interval: the uncertainty
	ev   fence
	refs int // marks using it, plus one while it is the current anchor
}

// anchorHost is the host time credited to an anchor event recorded after
// host time before and seen completed at host time after.
func anchorHost(before, after int64) (host, slop int64) {
	return before + (after-before)/2, (after - before + 1) / 2
}

// msToNs converts event milliseconds to nanoseconds.
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// eventClock holds the current anchor and maps events onto the host clock.
type eventClock struct {
	mu    sync.Mutex
	drv   clockDriver
	now   func() int64
	every int64 // renew the anchor when it is older than this (host ns)
	cur   *anchor
}

func newEventClock(drv clockDriver, now func() int64, every int64) *eventClock {
	return &eventClock{drv: drv, now: now, every: every}
}

// setNow changes the host clock; the anchor is renewed on it.
func (c *eventClock) setNow(now func() int64) error {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
	return c.renew()
}

// renew replaces the current anchor with a fresh one.
func (c *eventClock) renew() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renewLocked()
}

func (c *eventClock) renewLocked() error {
	ev, before, after, err := c.drv.anchorEvent(c.now)
	if err != nil {
		return err
	}
	host, slop := anchorHost(before, after)
	old := c.cur
	c.cur = &anchor{host: host, slop: slop, ev: ev, refs: 1}
	if old != nil {
		c.dropLocked(old)
	}
	return nil
}

// maybeRenew renews the anchor when it is older than the renewal period.
func (c *eventClock) maybeRenew() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.now()-c.cur.host < c.every {
		return nil
	}
	return c.renewLocked()
}

// acquire returns the current anchor for a new mark (renewing it first if
// there is none).
func (c *eventClock) acquire() (*anchor, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		if err := c.renewLocked(); err != nil {
			return nil, err
		}
	}
	c.cur.refs++
	return c.cur, nil
}

// hostTime maps a completed event, marked while a was current, onto the
// host clock.
func (c *eventClock) hostTime(a *anchor, ev fence) (int64, error) {
	ms, err := c.drv.elapsedMs(a.ev, ev)
	if err != nil {
		return 0, err
	}
	return a.host + msToNs(ms), nil
}

// release ends a mark's use of its anchor.
func (c *eventClock) release(a *anchor) {
	c.mu.Lock()
	c.dropLocked(a)
	c.mu.Unlock()
}

func (c *eventClock) dropLocked(a *anchor) {
	a.refs--
	if a.refs == 0 {
		c.drv.releaseEvent(a.ev)
		a.ev = nil
	}
}

// close releases the current anchor.
func (c *eventClock) close() {
	c.mu.Lock()
	if c.cur != nil {
		c.dropLocked(c.cur)
		c.cur = nil
	}
	c.mu.Unlock()
}
