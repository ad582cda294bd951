package sessions

import "time"

// rebaseLocked fixes the current position as the new base, so a change of
// speed or pause state applies from now on.
func (r *Replay) rebaseLocked() time.Time {
	now := r.clock.Now()
	if r.started {
		r.base = r.positionLocked(now)
	}
	r.started, r.anchor = true, now
	return now
}

// wakeLocked wakes a waiting Next to recompute its schedule.
func (r *Replay) wakeLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// Pause stops the replay's position (events already due are still
// delivered).
func (r *Replay) Pause() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.paused {
		r.rebaseLocked()
		r.paused = true
		r.wakeLocked()
	}
}

// Resume lets the position advance again after Pause.
func (r *Replay) Resume() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused {
		r.rebaseLocked()
		r.paused = false
		r.wakeLocked()
	}
}

// Paused reports whether the replay is paused.
func (r *Replay) Paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

// SetSpeed changes the speed (a positive finite factor: 1 as recorded, 10
// ten times faster, 0.5 half as fast) from the current position on.
func (r *Replay) SetSpeed(f float64) error {
	if err := checkSpeed(f); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rebaseLocked()
	r.speed = f
	r.wakeLocked()
	return nil
}

// Speed returns the replay speed.
func (r *Replay) Speed() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.speed
}

// Seek moves the position to t (clamped to [0, Duration]); a paused replay
// stays paused. Events up to t that were not delivered yet become due at
// once. If an event after t was already delivered, delivery restarts from
// the first event (see Replay and ReplayEvent.Restart).
func (r *Replay) Seek(t time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t = min(max(t, 0), r.dur)
	r.rebaseLocked()
	r.base, r.skip = t, 0
	if r.next > 0 && r.lastAt > t {
		r.next, r.lastAt = 0, 0
		r.restart = true
		for _, tr := range r.tracks {
			tr.rewind()
		}
	}
	r.wakeLocked()
}

// Position returns the replay's position on its timeline (0 to Duration).
func (r *Replay) Position() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.positionLocked(r.clock.Now())
}

// Duration returns the time of the last event on the replay's timeline.
func (r *Replay) Duration() time.Duration { return r.dur }

// Len returns the number of events in the replay.
func (r *Replay) Len() int { return r.n }

// Delivered returns the number of events Next has delivered since the
// start (or since the last restart).
func (r *Replay) Delivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}
