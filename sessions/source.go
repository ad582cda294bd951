package sessions

import (
	"context"

	"github.com/gnnscope/gnnscope/profile"
)

// Source yields a run's events one at a time, in journal order. Views
// read every run through a Source, so they work the same on a live run
// (Live: the journal's tail) and on a recorded one (Replay: the journal
// through a clock); only the controls differ (a Replay can be paused,
// sped up and moved).
type Source interface {
	// Next returns the next event, waiting until it is written (live) or
	// due (replay). It returns io.EOF after the last event (run_end for a
	// live run, the journal's last event for a replay), and ctx's error
	// when ctx is done while it waits.
	Next(ctx context.Context) (profile.Event, error)
}

// Live is the Source of a run being written: it follows the run's journal
// with a Tailer (a distributed run's ranks with a RunTailer) and returns
// its events one at a time. After run_end it returns io.EOF; if the
// writer died without run_end (see TailRun), ErrWriterGone. It is not
// safe for concurrent use.
type Live struct {
	t   *Tailer
	src interface {
		Next(ctx context.Context) ([]profile.Event, error)
		Close() error
	}
	buf []profile.Event
	i   int
	err error // returned once buf is drained
}

var _ Source = (*Live)(nil)

// NewLive returns a Source reading from t.
func NewLive(t *Tailer) *Live { return &Live{t: t, src: t} }

// Live returns a Source following the journals of one of the session's
// runs (TailRunRanks: a distributed run's ranks merged; it stops with
// ErrWriterGone if the run's writer dies without ending its journal).
// Close it when done.
func (s *Session) Live(run string, opts TailOptions) (*Live, error) {
	rt, err := s.TailRunRanks(run, opts)
	if err != nil {
		return nil, err
	}
	return &Live{t: rt.ranks[0].t, src: rt}, nil
}

// Next returns the next event of the journal, waiting for it to be
// written (see Source).
func (l *Live) Next(ctx context.Context) (profile.Event, error) {
	for {
		if l.i < len(l.buf) {
			e := l.buf[l.i]
			l.buf[l.i] = profile.Event{}
			l.i++
			return e, nil
		}
		if l.err != nil {
			err := l.err
			l.err = nil
			return profile.Event{}, err
		}
		evs, err := l.src.Next(ctx)
		l.buf, l.i, l.err = evs, 0, err
	}
}

// RankStarts returns what the run's ranks' run_starts say of them, as
// far as read (RunTailer.RankStarts; nil for a run of one process).
func (l *Live) RankStarts() []RankStart {
	if rt, ok := l.src.(*RunTailer); ok {
		return rt.RankStarts()
	}
	return nil
}

// Tailer returns the Tailer of the run's journal (offset, stats; rank
// 0's for a distributed run).
func (l *Live) Tailer() *Tailer { return l.t }

// Close releases the journal files.
func (l *Live) Close() error { return l.src.Close() }
