package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// EventTime returns the time of event e on its run's clock (nanoseconds
// since the run's start), as a replay schedules it, given the time of the
// event before it in the journal (prev; 0 for the first). An event's time
// is when it was written:
//
//   - a span: its end, start+dur (the engine records a span when it ends);
//   - a gpu sample: its ts;
//   - every other event (run_start, mem, metric, oom, stale, hist_err,
//     run_end): prev, the time of the event before it, since these are
//     written right after the work they describe.
//
// The result is never less than prev: lanes record concurrently, so a span
// may reach the journal after one that ended later; it is then delivered
// at the later time, keeping the journal's order. Journal order and time
// order are therefore the same on the replay's timeline.
func EventTime(e *profile.Event, prev int64) int64 {
	t := prev
	switch e.T {
	case profile.TypeSpan:
		t = e.Start + e.Dur
	case profile.TypeGPU:
		t = e.Ts
	}
	return max(t, prev)
}

// Track is one run's events on a replay's timeline.
type Track struct {
	// Run names the run (ReplayEvent.Run).
	Run string
	// Offset is where the run's clock starts on the timeline (>= 0).
	Offset time.Duration
	// Events are the run's events in journal order.
	Events []profile.Event
}

// ReplayEvent is an event with its place on a replay's timeline.
type ReplayEvent struct {
	Run   string        // the event's Track.Run
	Track int           // index of the event's track
	At    time.Duration // when it is due: Track.Offset + EventTime
	// Restart is set on the first event delivered after a backward Seek:
	// what was delivered before no longer holds; the events up to the
	// seek position follow again, from each track's first event.
	Restart bool
	Event   profile.Event
}

// ReplayOptions tune a Replay.
type ReplayOptions struct {
	// Clock is the time source; default SystemClock.
	Clock Clock
	// Speed is the replay speed (1 = as recorded, 10 = ten times
	// faster); default 1.
	Speed float64
	// Paused starts the replay paused (Resume starts it).
	Paused bool
}

// Replay yields recorded events with their original timing, scaled by a
// speed: it is a Source, like Live, so a view consumes a replay exactly as
// it consumes a live run. Each event is due at its time on the replay's
// timeline (ReplayEvent.At, see EventTime); Next returns it once the
// replay's position has reached that time.
//
// The position advances with the clock, Speed times as fast, from 0 at the
// first call of Next or of a control, and stops at Duration. Pause stops it,
// Resume restarts it, SetSpeed changes the speed from the current
// position on, Seek jumps to a position. Events already due (at or before
// the position) are always delivered at once, even while paused: after a
// Seek to t, Next returns every event up to t without waiting, so a view
// rebuilds the state at t, and then waits for the next one. Seeking
// backwards (before an event already delivered) restarts delivery from the
// first event; the first event delivered after that has Restart set, and
// each run's run_start comes again.
//
// Controls may be called from any goroutine, also while Next waits; Next
// itself is meant for one goroutine.
type Replay struct {
	clock  Clock
	tracks []Track
	order  []replayRef // every event, in delivery order
	dur    time.Duration

	mu      sync.Mutex
	next    int           // index of the next event to deliver
	base    time.Duration // position at anchor
	anchor  time.Time     // clock time base was taken at
	started bool          // anchor set (the first Next, or a control)
	speed   float64
	paused  bool
	restart bool          // the next event delivered carries Restart
	wake    chan struct{} // closed and replaced when the schedule changes
}

var _ Source = (*Replay)(nil)

// replayRef places one event of a track on the timeline (the events stay
// in their tracks: a reference is much smaller than an event).
type replayRef struct {
	at    time.Duration
	track int32
	index int32
}

// NewReplay returns a replay of the tracks' events merged in time order
// (ties: earlier tracks first, then journal order). It keeps the tracks'
// event slices (do not modify them afterwards).
func NewReplay(tracks []Track, opts ReplayOptions) (*Replay, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if err := checkSpeed(opts.Speed); err != nil {
		return nil, err
	}
	n := 0
	for i, tr := range tracks {
		if tr.Offset < 0 {
			return nil, fmt.Errorf("replay: track %d (%s) has a negative offset %v", i, tr.Run, tr.Offset)
		}
		if len(tr.Events) > math.MaxInt32 || len(tracks) > math.MaxInt32 {
			return nil, fmt.Errorf("replay: track %d (%s) is too long", i, tr.Run)
		}
		n += len(tr.Events)
	}
	r := &Replay{clock: opts.Clock, tracks: tracks, order: make([]replayRef, 0, n), speed: opts.Speed, paused: opts.Paused, wake: make(chan struct{})}
	for i, tr := range tracks {
		var prev int64
		for j := range tr.Events {
			prev = EventTime(&tr.Events[j], prev)
			r.order = append(r.order, replayRef{at: tr.Offset + time.Duration(prev), track: int32(i), index: int32(j)})
		}
	}
	// each track is already in time order: a stable sort merges them
	slices.SortStableFunc(r.order, func(a, b replayRef) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return int(a.track - b.track)
	})
	if len(r.order) > 0 {
		r.dur = r.order[len(r.order)-1].at
	}
	return r, nil
}

// ErrBadSpeed is returned for a replay speed that is not a positive finite
// number.
var ErrBadSpeed = errors.New("replay speed must be a positive finite number")

func checkSpeed(f float64) error {
	if !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%w (got %g)", ErrBadSpeed, f)
	}
	return nil
}

// OpenReplay returns a replay of one journal file (as it is now: a replay
// does not follow a journal that is still being written; use Live for
// that). The track is named after run_start's run, else the file.
func OpenReplay(path string, opts ReplayOptions) (*Replay, error) {
	evs, _, err := ReadJournal(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	run := strings.TrimSuffix(filepath.Base(path), journalExt)
	if len(evs) > 0 && evs[0].T == profile.TypeRunStart && evs[0].Run != "" {
		run = evs[0].Run
	}
	return NewReplay([]Track{{Run: run, Events: evs}}, opts)
}

// Replay returns a replay of some runs of the session (all runs with a
// journal if runs is empty), merged on one timeline: each run's clock
// starts at its own run_start, placed by run_start's wall-clock time
// relative to the earliest run's (a run without a readable wall time
// starts at 0). Runs that are still being written are replayed as far as
// their journals go now.
func (s *Session) Replay(runs []string, opts ReplayOptions) (*Replay, error) {
	if len(runs) == 0 {
		all, err := s.Runs()
		if err != nil {
			return nil, err
		}
		for _, run := range all {
			if fi, err := os.Stat(s.JournalPath(run)); err == nil && fi.Size() > 0 {
				runs = append(runs, run)
			}
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("replay session %s: no run has a journal yet", s.ID())
		}
	}
	tracks := make([]Track, 0, len(runs))
	walls := make([]time.Time, 0, len(runs))
	var first time.Time
	for _, run := range runs {
		if err := ValidName(run); err != nil {
			return nil, fmt.Errorf("replay session %s: %w", s.ID(), err)
		}
		evs, _, err := ReadJournal(s.JournalPath(run))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("replay session %s: run %s has no journal: %w", s.ID(), run, os.ErrNotExist)
			}
			return nil, fmt.Errorf("replay session %s: %w", s.ID(), err)
		}
		var wall time.Time
		if len(evs) > 0 && evs[0].T == profile.TypeRunStart {
			if w, err := evs[0].WallTime(); err == nil {
				wall = w
				if first.IsZero() || w.Before(first) {
					first = w
				}
			}
		}
		tracks = append(tracks, Track{Run: run, Events: evs})
		walls = append(walls, wall)
	}
	for i, w := range walls {
		if !w.IsZero() {
			tracks[i].Offset = w.Sub(first)
		}
	}
	return NewReplay(tracks, opts)
}

// Next returns the next event once it is due (see Replay); io.EOF after
// the last one. It returns ctx's error when ctx is done and the next event
// is not due yet.
func (r *Replay) Next(ctx context.Context) (profile.Event, error) {
	ev, err := r.NextEvent(ctx)
	return ev.Event, err
}

// NextEvent is Next with the event's run and place on the timeline.
func (r *Replay) NextEvent(ctx context.Context) (ReplayEvent, error) {
	for {
		r.mu.Lock()
		if r.next >= len(r.order) {
			r.mu.Unlock()
			return ReplayEvent{}, io.EOF
		}
		now := r.clock.Now()
		if !r.started {
			r.started, r.anchor = true, now
		}
		ref := r.order[r.next]
		pos := r.positionLocked(now)
		if ref.at <= pos {
			r.next++
			tr := &r.tracks[ref.track]
			ev := ReplayEvent{Run: tr.Run, Track: int(ref.track), At: ref.at, Restart: r.restart, Event: tr.Events[ref.index]}
			r.restart = false
			r.mu.Unlock()
			return ev, nil
		}
		if err := ctx.Err(); err != nil {
			r.mu.Unlock()
			return ReplayEvent{}, err
		}
		wake := r.wake
		var timer Timer
		var fire <-chan time.Time
		if !r.paused {
			wait := time.Duration(math.Ceil(float64(ref.at-pos) / r.speed))
			timer = r.clock.NewTimer(max(wait, 1))
			fire = timer.C()
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// positionLocked returns the position at clock time now.
func (r *Replay) positionLocked(now time.Time) time.Duration {
	pos := r.base
	if r.started && !r.paused {
		pos += time.Duration(float64(now.Sub(r.anchor)) * r.speed)
	}
	return min(max(pos, 0), r.dur)
}

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
	r.base = t
	if r.next > 0 && r.order[r.next-1].at > t {
		r.next = 0
		r.restart = true
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
func (r *Replay) Len() int { return len(r.order) }

// Delivered returns the number of events Next has delivered since the
// start (or since the last restart).
func (r *Replay) Delivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}
