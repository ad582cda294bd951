package sessions

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source of a Replay. SystemClock is the real one;
// FakeClock lets tests (and views that step a replay) control time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C returns the channel the timer fires on.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped
	// a pending timer.
	Stop() bool
}

// SystemClock is the real clock (time.Now, time.NewTimer).
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (SystemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }

// FakeClock is a Clock that moves only when told to: Advance and Set move
// it and fire the timers that are due. In auto-advance mode (SetAutoAdvance)
// NewTimer moves the clock to the timer's deadline at once and fires it, so
// a single goroutine can run a whole replay instantly while the clock still
// reads the time each event would have been delivered at. It is safe for
// concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	auto   bool
	timers []*fakeTimer
	change chan struct{} // closed and replaced when the pending timers change
}

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, change: make(chan struct{})}
}

// SetAutoAdvance turns auto-advance mode on or off.
func (c *FakeClock) SetAutoAdvance(on bool) {
	c.mu.Lock()
	c.auto = on
	c.mu.Unlock()
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer firing once the clock has advanced by d (at once
// in auto-advance mode, after moving the clock by d).
func (c *FakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	if c.auto && d > 0 {
		c.now = t.at
	}
	c.fireLocked()
	c.signalLocked()
	return t
}

// Advance moves the clock forward by d and fires the timers that are due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

// Set moves the clock to t (it may go backwards; timers fire only once
// their deadline is reached).
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	c.fireLocked()
}

// Timers returns the number of pending timers (neither fired nor stopped).
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Next returns the deadline of the earliest pending timer; ok is false if
// there is none.
func (c *FakeClock) Next() (at time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range c.timers {
		if i == 0 || t.at.Before(at) {
			at = t.at
		}
	}
	return at, len(c.timers) > 0
}

// WaitForTimers blocks until at least n timers are pending, or ctx is done
// (returning its error). Tests use it to know that a goroutine is blocked
// on the clock before they advance it.
func (c *FakeClock) WaitForTimers(ctx context.Context, n int) error {
	return c.waitFor(ctx, func() bool { return len(c.timers) >= n })
}

// WaitForDeadline blocks until a pending timer is due exactly at at, or ctx
// is done (returning its error).
func (c *FakeClock) WaitForDeadline(ctx context.Context, at time.Time) error {
	return c.waitFor(ctx, func() bool {
		for _, t := range c.timers {
			if t.at.Equal(at) {
				return true
			}
		}
		return false
	})
}

// waitFor blocks until cond (called with c.mu held) holds.
func (c *FakeClock) waitFor(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		if cond() {
			c.mu.Unlock()
			return nil
		}
		ch := c.change
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// fireLocked fires and removes the timers that are due.
func (c *FakeClock) fireLocked() {
	kept := c.timers[:0]
	fired := false
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now // buffered, fires once
			fired = true
			continue
		}
		kept = append(kept, t)
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	if fired {
		c.signalLocked()
	}
}

func (c *FakeClock) signalLocked() {
	close(c.change)
	c.change = make(chan struct{})
}

type fakeTimer struct {
	c  *FakeClock
	at time.Time
	ch chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.timers {
		if p == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.signalLocked()
			return true
		}
	}
	return false
}
