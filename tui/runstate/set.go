package runstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// Set is the state of a session's runs, fed in the background from
// sessions.Live sources (StartLive) or a sessions.Replay (StartReplay).
// Readers Lock it, read Runs and Unlock; Version tells them, without the
// lock, whether anything changed since they last drew.
type Set struct {
	mu   sync.Mutex
	runs []*Run

	version atomic.Uint64 // bumped on every event and reset
	busy    atomic.Int32  // feeders that may still deliver events without a poke

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	poke    chan struct{} // wakes a replay feeder that reached the end
	closers []io.Closer
	started bool
	closed  bool
}

// NewSet returns a set of empty runs with the given names, in order.
func NewSet(names []string) *Set {
	s := &Set{poke: make(chan struct{}, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, n := range names {
		s.runs = append(s.runs, NewRun(n))
	}
	return s
}

// Lock locks the set: feeders wait until Unlock.
func (s *Set) Lock() { s.mu.Lock() }

// Unlock unlocks the set.
func (s *Set) Unlock() { s.mu.Unlock() }

// Runs returns the runs, in the order given to NewSet. Read them with the
// set locked.
func (s *Set) Runs() []*Run { return s.runs }

// Version changes whenever any run changes (safe without the lock).
func (s *Set) Version() uint64 { return s.version.Load() }

// Active reports whether a feeder may still deliver events on its own: a
// live run that has not ended, or a replay that has not reached its end
// (a replay at its end becomes active again after a Poke).
func (s *Set) Active() bool { return s.busy.Load() > 0 }

// Add digests an event into run i under the lock (for callers that feed a
// set themselves, such as tests and benchmarks).
func (s *Set) Add(i int, e *profile.Event) {
	s.mu.Lock()
	s.runs[i].Add(e)
	s.mu.Unlock()
	s.version.Add(1)
}

// SetStored records what the session store says of run i
// (sessions.RunState's status and error; see Run.Stored).
func (s *Set) SetStored(i int, status profile.Status, errText string) {
	s.mu.Lock()
	if i >= 0 && i < len(s.runs) {
		r := s.runs[i]
		r.Stored, r.StoredError = status, errText
		r.version++
	}
	s.mu.Unlock()
	s.version.Add(1)
}

// StartLive feeds run i from sources[i] (sessions.Live, usually), each in
// its own goroutine, until the source returns io.EOF (run_end), an error
// (kept in the run's Err) or Close. Sources that are io.Closers are closed
// by Close. A nil source leaves its run empty.
func (s *Set) StartLive(sources []sessions.Source) error {
	if err := s.start(); err != nil {
		return err
	}
	if len(sources) > len(s.runs) {
		return fmt.Errorf("runstate: %d sources for %d runs", len(sources), len(s.runs))
	}
	for i, src := range sources {
		if src == nil {
			continue
		}
		if c, ok := src.(io.Closer); ok {
			s.closers = append(s.closers, c)
		}
		s.busy.Add(1)
		s.wg.Add(1)
		go s.feedLive(i, src)
	}
	return nil
}

func (s *Set) feedLive(i int, src sessions.Source) {
	defer s.wg.Done()
	defer s.busy.Add(-1)
	starts := 0
	for {
		e, err := src.Next(s.ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || s.ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			s.runs[i].Err = err
			s.runs[i].version++
			s.mu.Unlock()
			s.version.Add(1)
			return
		}
		starts = s.takeRankStarts(i, src, starts) // a length check, mostly
		s.Add(i, &e)
	}
}

// StartReplay feeds the runs from a replay whose track i is run i. A
// backward seek (ReplayEvent.Restart) empties every run before the
// replayed events come again. At the replay's end the feeder waits for
// Poke (call it after a control such as Seek, so that it reads on). An
// error reading the replay stops it and is kept in every run's Err. Close
// closes the replay.
func (s *Set) StartReplay(r *sessions.Replay) error {
	if err := s.start(); err != nil {
		return err
	}
	s.closers = append(s.closers, r)
	s.busy.Add(1)
	s.wg.Add(1)
	go s.feedReplay(r)
	return nil
}

func (s *Set) feedReplay(r *sessions.Replay) {
	defer s.wg.Done()
	idle := false
	defer func() {
		if !idle {
			s.busy.Add(-1)
		}
	}()
	for {
		ev, err := r.NextEvent(s.ctx)
		if errors.Is(err, io.EOF) {
			if !idle {
				idle = true
				s.drained()
				s.busy.Add(-1)
			}
			select {
			case <-s.ctx.Done():
				return
			case <-s.poke:
			}
			idle = false
			s.busy.Add(1)
			continue
		}
		if err != nil {
			if s.ctx.Err() == nil { // not Close: the replay cannot go on
				s.mu.Lock()
				for _, run := range s.runs {
					run.Err = err
					run.version++
				}
				s.mu.Unlock()
				s.version.Add(1)
			}
			return
		}
		s.mu.Lock()
		if ev.Restart {
			for _, run := range s.runs {
				run.reset()
			}
		}
		if ev.Track >= 0 && ev.Track < len(s.runs) {
			s.runs[ev.Track].Add(&ev.Event)
		}
		s.mu.Unlock()
		s.version.Add(1)
	}
}

// drained marks every run as fully replayed (a backward seek's restart
// clears it).
func (s *Set) drained() {
	changed := false
	s.mu.Lock()
	for _, r := range s.runs {
		if !r.Drained {
			r.Drained = true
			r.version++
			changed = true
		}
	}
	s.mu.Unlock()
	if changed { // a replay poked at its end changes nothing
		s.version.Add(1)
	}
}

// Poke wakes a replay feeder that reached the replay's end, after a
// control moved the replay back.
func (s *Set) Poke() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func (s *Set) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("runstate: set is closed")
	}
	s.started = true
	return nil
}

// Close stops the feeders, waits for them and closes the sources that
// are io.Closers. It returns the first error closing them.
func (s *Set) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = fmt.Errorf("runstate: close source: %w", err)
		}
	}
	return first
}
