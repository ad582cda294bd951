package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
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
}

var (
	_ Source    = (*Replay)(nil)
	_ io.Closer = (*Replay)(nil)
)

// replayTrack is one run's events and a cursor over them: the events are
// either in memory (a Track given to NewReplay) or in a journal file,
// decoded as they are reached. The cursor holds the track's next event
// (head), so merging the tracks needs nothing per event.
type replayTrack struct {
	run    string
	offset time.Duration
	n      int             // events in the track
	evs    []profile.Event // the events, for a track in memory
	path   string          // the journal, for a track on disk
	size   int64           // bytes of the journal that hold the n events

	f  *os.File       // the open journal (nil until needed, and once read)
	jr *journalReader // reads f up to size

	read   int           // events read so far, head included
	prev   int64         // EventTime of the last event read
	head   profile.Event // the next event to deliver, if has
	headAt time.Duration // head's place on the timeline
	has    bool
}

// rewind moves the cursor back to the first event.
func (tr *replayTrack) rewind() {
	tr.read, tr.prev, tr.has, tr.head = 0, 0, false, profile.Event{}
	if tr.f != nil {
		tr.jr.reset(io.NewSectionReader(tr.f, 0, tr.size))
	}
}

// fill reads the track's next event into head, if it has one left.
func (tr *replayTrack) fill() error {
	if tr.has || tr.read >= tr.n {
		return nil
	}
	if tr.evs != nil {
		tr.head = tr.evs[tr.read]
	} else if err := tr.readNext(); err != nil {
		return err
	}
	tr.read++
	tr.prev = EventTime(&tr.head, tr.prev)
	tr.headAt = tr.offset + time.Duration(tr.prev)
	tr.has = true
	if tr.read == tr.n {
		return tr.close() // all read: the journal is no longer needed
	}
	return nil
}

// readNext decodes the journal's next event into head, opening the
// journal (again) where needed.
func (tr *replayTrack) readNext() error {
	if tr.f == nil {
		f, err := os.Open(tr.path)
		if err != nil {
			return fmt.Errorf("replay %s: %w", tr.run, err)
		}
		tr.f = f
		// skip what was read before the file was closed
		sr := io.NewSectionReader(f, 0, tr.size)
		if tr.jr == nil {
			tr.jr = newJournalReader(sr)
		} else {
			tr.jr.reset(sr)
		}
		for range tr.read {
			if err := tr.decode(); err != nil {
				return err
			}
		}
	}
	return tr.decode()
}

// decode decodes the next event of the open journal into head.
func (tr *replayTrack) decode() error {
	ok, err := tr.jr.next(&tr.head)
	if err != nil {
		return fmt.Errorf("replay %s: %s: %w", tr.run, tr.path, err)
	}
	if !ok {
		return fmt.Errorf("replay %s: journal %s has %d events, %d when the replay opened it: it was replaced", tr.run, tr.path, tr.jr.st.Events, tr.n)
	}
	return nil
}

// close closes the journal file, if open.
func (tr *replayTrack) close() error {
	if tr.f == nil {
		return nil
	}
	err := tr.f.Close()
	tr.f = nil
	if err != nil {
		return fmt.Errorf("replay %s: %w", tr.run, err)
	}
	return nil
}

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
	r := &Replay{clock: opts.Clock, tracks: tracks, speed: opts.Speed, paused: opts.Paused, wake: make(chan struct{})}
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

// journalTrack reads the journal at path once, without keeping its
// events: it counts them, takes the time of the last one (in prev) and
// the bytes that hold them, and returns the track (named run) open on the
// journal with its first event, which says the run's name and start.
func journalTrack(path, run string) (*replayTrack, profile.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, profile.Event{}, fmt.Errorf("read journal %s: %w", path, err)
	}
	tr := &replayTrack{run: run, path: path, f: f, jr: newJournalReader(f)}
	var first, e profile.Event
	for {
		ok, err := tr.jr.next(&e)
		if err != nil {
			f.Close()
			return nil, first, fmt.Errorf("read journal %s: %w", path, err)
		}
		if !ok {
			break
		}
		if tr.n == 0 {
			first = e
		}
		tr.n++
		tr.prev = EventTime(&e, tr.prev)
	}
	tr.size = tr.jr.st.Bytes
	if tr.n == 0 {
		return tr, first, tr.close()
	}
	tr.jr.reset(io.NewSectionReader(f, 0, tr.size))
	return tr, first, nil
}

// OpenReplay returns a replay of one journal file (as it is now: a replay
// does not follow a journal that is still being written; use Live for
// that). The track is named after run_start's run, else the file.
func OpenReplay(path string, opts ReplayOptions) (*Replay, error) {
	tr, first, err := journalTrack(path, strings.TrimSuffix(filepath.Base(path), journalExt))
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if first.T == profile.TypeRunStart && first.Run != "" {
		tr.run = first.Run
	}
	r, err := newReplay([]*replayTrack{tr}, opts)
	if err != nil {
		tr.close()
		return nil, err
	}
	return r, nil
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
	tracks := make([]*replayTrack, 0, len(runs))
	closeAll := func() {
		for _, tr := range tracks {
			tr.close()
		}
	}
	walls := make([]time.Time, 0, len(runs))
	var first time.Time
	for _, run := range runs {
		if err := ValidName(run); err != nil {
			closeAll()
			return nil, fmt.Errorf("replay session %s: %w", s.ID(), err)
		}
		tr, ev, err := journalTrack(s.JournalPath(run), run)
		if err != nil {
			closeAll()
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("replay session %s: run %s has no journal: %w", s.ID(), run, os.ErrNotExist)
			}
			return nil, fmt.Errorf("replay session %s: %w", s.ID(), err)
		}
		var wall time.Time
		if ev.T == profile.TypeRunStart {
			if w, err := ev.WallTime(); err == nil {
				wall = w
				if first.IsZero() || w.Before(first) {
					first = w
				}
			}
		}
		tracks = append(tracks, tr)
		walls = append(walls, wall)
	}
	for i, w := range walls {
		if !w.IsZero() {
			tracks[i].offset = w.Sub(first)
		}
	}
	r, err := newReplay(tracks, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	return r, nil
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
			ev := ReplayEvent{Run: tr.run, Track: i, At: tr.headAt, Restart: r.restart, Event: tr.head}
			tr.head, tr.has = profile.Event{}, false
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
			wait := time.Duration(math.Ceil(float64(tr.headAt-pos) / r.speed))
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
