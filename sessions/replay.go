package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
	// Skipped is the part of the timeline skipped right before this
	// event: a gap longer than the replay's longest wait (see
	// ReplayOptions.MaxWait). A view shows it ("skipped 8760h"); 0 for
	// most events.
	Skipped time.Duration
	Event   profile.Event
}

// DefaultMaxWait is the longest a replay waits for its next event, in
// real time, unless ReplayOptions.MaxWait says otherwise: 2 s. A gap
// between events that would take longer at the replay's speed (a span
// dated a year late, runs started hours apart) is skipped after that
// wait, and the event after it says how much was skipped
// (ReplayEvent.Skipped).
const DefaultMaxWait = 2 * time.Second

// ReplayOptions tune a Replay.
type ReplayOptions struct {
	// Clock is the time source; default SystemClock.
	Clock Clock
	// Speed is the replay speed (1 = as recorded, 10 = ten times
	// faster); default 1.
	Speed float64
	// Paused starts the replay paused (Resume starts it).
	Paused bool
	// MaxWait is the longest the replay waits for one event, in real
	// time: a longer wait is cut to MaxWait and the rest of the gap is
	// skipped (ReplayEvent.Skipped). 0 means DefaultMaxWait; a negative
	// MaxWait waits as long as the timeline says.
	MaxWait time.Duration
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
// position on, Seek jumps to a position. No single wait lasts longer than
// ReplayOptions.MaxWait (DefaultMaxWait): the position then jumps to the
// next event, and the event reports the gap it skipped. Events already due (at or before
// the position) are always delivered at once, even while paused: after a
// Seek to t, Next returns every event up to t without waiting, so a view
// rebuilds the state at t, and then waits for the next one. Seeking
// backwards (before an event already delivered) restarts delivery from the
// first event; the first event delivered after that has Restart set, and
// each run's run_start comes again.
//
// A replay of journals (OpenReplay, Session.Replay) does not hold their
// events: opening it reads each journal once to count its events and time
// them, and delivery decodes them again one at a time as they become due,
// so its memory does not grow with the journals. It keeps a journal open
// while some of its events are still to be delivered; Close releases them
// early.
//
// Controls may be called from any goroutine, also while Next waits; Next
// itself is meant for one goroutine.
type Replay struct {
	clock  Clock
	tracks []*replayTrack
	n      int           // events in all tracks
	dur    time.Duration // time of the last event

	mu      sync.Mutex
	next    int           // events delivered since the start or the last restart
	lastAt  time.Duration // time of the last event delivered
	base    time.Duration // position at anchor
	anchor  time.Time     // clock time base was taken at
	started bool          // anchor set (the first Next, or a control)
	speed   float64
	paused  bool
	restart bool          // the next event delivered carries Restart
	wake    chan struct{} // closed and replaced when the schedule changes
	maxWait time.Duration // the longest single wait (<= 0: none)
	skip    time.Duration // gap skipped before the next event delivered
	skipped time.Duration // gaps skipped in all
}

var (
	_ Source    = (*Replay)(nil)
	_ io.Closer = (*Replay)(nil)
)

// NewReplay returns a replay of the tracks' events merged in time order
// (ties: earlier tracks first, then journal order). It keeps the tracks'
// event slices (do not modify them afterwards).
func NewReplay(tracks []Track, opts ReplayOptions) (*Replay, error) {
	rts := make([]*replayTrack, len(tracks))
	for i, tr := range tracks {
		rt := &replayTrack{run: tr.Run, offset: tr.Offset, n: len(tr.Events), evs: tr.Events}
		if rt.evs == nil {
			rt.evs = []profile.Event{}
		}
		rts[i] = rt
	}
	return newReplay(rts, opts)
}

// newReplay checks the options and the tracks (whose n is set) and times
// them: the duration is the time of the last event of the track ending
// last (each track is in time order).
func newReplay(tracks []*replayTrack, opts ReplayOptions) (*Replay, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if err := checkSpeed(opts.Speed); err != nil {
		return nil, err
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	r := &Replay{clock: opts.Clock, tracks: tracks, speed: opts.Speed, paused: opts.Paused, wake: make(chan struct{}),
		maxWait: opts.MaxWait}
	for i, tr := range tracks {
		if tr.offset < 0 {
			return nil, fmt.Errorf("replay: track %d (%s) has a negative offset %v", i, tr.run, tr.offset)
		}
		r.n += tr.n
		if tr.evs != nil {
			var prev int64
			for j := range tr.evs {
				prev = EventTime(&tr.evs[j], prev)
			}
			tr.prev = prev
		}
		if tr.n > 0 {
			r.dur = max(r.dur, tr.offset+time.Duration(tr.prev))
		}
		tr.prev = 0
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

// Close releases the journals the replay holds open. The replay stays
// usable: delivering events it has yet to deliver opens them again.
func (r *Replay) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for _, tr := range r.tracks {
		if err := tr.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
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
		if r.next >= r.n {
			r.mu.Unlock()
			return ReplayEvent{}, io.EOF
		}
		now := r.clock.Now()
		if !r.started {
			r.started, r.anchor = true, now
		}
		i, err := r.headLocked()
		if err != nil {
			r.mu.Unlock()
			return ReplayEvent{}, err
		}
		tr := r.tracks[i]
		pos := r.positionLocked(now)
		if tr.headAt <= pos {
			r.next++
			r.lastAt = tr.headAt
			ev := ReplayEvent{Run: tr.run, Track: i, At: tr.headAt, Restart: r.restart, Skipped: r.skip, Event: tr.head}
			tr.head, tr.has = profile.Event{}, false
			r.restart, r.skip = false, 0
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
		capped := false
		if !r.paused {
			wait := time.Duration(math.MaxInt64)
			if w := math.Ceil(float64(tr.headAt-pos) / r.speed); w < float64(math.MaxInt64) {
				wait = time.Duration(w)
			}
			if capped = r.maxWait > 0 && wait > r.maxWait; capped {
				wait = r.maxWait
			}
			timer = r.clock.NewTimer(max(wait, 1))
			fire = timer.C()
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-wake:
		case <-fire:
			if capped {
				r.skipTo(wake, tr)
			}
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// skipTo moves the position to the head event of tr after a wait cut
// short by maxWait, unless the schedule changed meanwhile (a control
// replaced wake), and records the gap skipped.
func (r *Replay) skipTo(wake chan struct{}, tr *replayTrack) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wake != wake || r.paused || !tr.has {
		return
	}
	now := r.clock.Now()
	if gap := tr.headAt - r.positionLocked(now); gap > 0 {
		r.base, r.anchor, r.started = tr.headAt, now, true
		r.skip += gap
		r.skipped += gap
	}
}

// Skipped returns the time of the timeline skipped in all: gaps longer
// than the longest wait (see ReplayOptions.MaxWait).
func (r *Replay) Skipped() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// headLocked returns the track whose next event comes first: the earliest
// (ties: the earlier track). Some event must be left to deliver.
func (r *Replay) headLocked() (int, error) {
	best := -1
	for i, tr := range r.tracks {
		if err := tr.fill(); err != nil {
			return -1, err
		}
		if tr.has && (best < 0 || tr.headAt < r.tracks[best].headAt) {
			best = i
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("replay: %d of %d events delivered and none left", r.next, r.n)
	}
	return best, nil
}

// positionLocked returns the position at clock time now.
func (r *Replay) positionLocked(now time.Time) time.Duration {
	pos := r.base
	if r.started && !r.paused {
		pos += time.Duration(float64(now.Sub(r.anchor)) * r.speed)
	}
	return min(max(pos, 0), r.dur)
}
