package sessions

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// RunTailer follows a run that is being written: its journal and, for a
// distributed run, its ranks' journals (see ScanRun), including those
// that appear after the tail started. Each poll returns the new events of
// every rank, rewritten for the merged run and in time order within the
// poll; events of a rank other than 0 wait for rank 0's run_start, whose
// wall clock places them. After rank 0's run_end, which comes last, Next
// returns io.EOF. It is not safe for concurrent use.
type RunTailer struct {
	s     *Session
	run   string
	opts  TailOptions
	ranks []*rankTail // rank 0 first
	start *profile.Event
	ended bool           // run_end returned
	held  *profile.Event // rank 0's run_end, returned after the other ranks' last events
	// starts are the ranks' run_starts read so far, in the order read
	starts []RankStart
}

// rankTail is one rank's journal in a RunTailer.
type rankTail struct {
	rank    int
	t       *Tailer
	view    rankView
	first   *profile.Event // the rank's run_start
	pending []profile.Event
	placed  bool  // view set (rank 0's run_start was read)
	at      int64 // time of the rank's last event on the merged clock
}

// TailRunRanks returns a RunTailer on a run: its journal is followed as
// TailRun follows it (Alive checks the run's pid file unless set in
// opts), and so are its ranks' journals.
func (s *Session) TailRunRanks(run string, opts TailOptions) (*RunTailer, error) {
	t0, err := s.TailRun(run, opts)
	if err != nil {
		return nil, err
	}
	return &RunTailer{s: s, run: run, opts: t0.opts, ranks: []*rankTail{{rank: 0, t: t0}}}, nil
}

// Stats returns what the tail has read so far, summed over the ranks.
func (rt *RunTailer) Stats() ReadStats {
	var st ReadStats
	for _, r := range rt.ranks {
		s := r.t.Stats()
		st.Lines += s.Lines
		st.Events += s.Events
		st.Malformed += s.Malformed
		st.Bytes += s.Bytes
		st.Torn = st.Torn || s.Torn
		if st.FirstMalformed == 0 {
			st.FirstMalformed, st.FirstError = s.FirstMalformed, s.FirstError
		}
	}
	return st
}

// Ended reports whether rank 0's run_end has been returned.
func (rt *RunTailer) Ended() bool { return rt.ended }

// Ranks returns the ranks whose journals are followed so far.
func (rt *RunTailer) Ranks() []int {
	out := make([]int, len(rt.ranks))
	for i, r := range rt.ranks {
		out[i] = r.rank
	}
	return out
}

// RankStarts returns what the ranks' run_starts read so far say of their
// ranks, in the order they were read (without clocks: see
// Session.RankStarts). The slice only grows: a caller may keep it and
// compare its length with a later call's (a run of one process: its
// one run_start).
func (rt *RunTailer) RankStarts() []RankStart { return rt.starts }

// discover adds the rank journals that appeared.
func (rt *RunTailer) discover() error {
	if rt.start == nil || !rt.start.Distributed() || len(rt.ranks) >= rt.start.World {
		return nil
	}
	ents, err := os.ReadDir(rt.s.RunsDir())
	if err != nil {
		return err
	}
	for _, ent := range ents {
		name, ok := strings.CutSuffix(ent.Name(), journalExt)
		if !ok {
			continue
		}
		base, r, ok := SplitRankRun(name)
		if !ok || base != rt.run || slices.ContainsFunc(rt.ranks, func(k *rankTail) bool { return k.rank == r }) {
			continue
		}
		o := rt.opts
		o.Offset, o.Alive = 0, nil
		rt.ranks = append(rt.ranks, &rankTail{rank: r, t: NewTailer(rt.s.RankJournalPath(rt.run, r), o)})
	}
	return nil
}

// Poll returns the events written since the last call, merged (nil if
// none). It does not block.
func (rt *RunTailer) Poll() ([]profile.Event, error) {
	if rt.ended {
		return nil, nil
	}
	lists := make([][]timedEvent, 0, len(rt.ranks))
	for i := 0; i < len(rt.ranks); i++ {
		r := rt.ranks[i]
		evs, err := r.t.Poll()
		if err != nil {
			return nil, err
		}
		if r.rank == 0 && rt.start == nil && len(evs) > 0 && evs[0].T == profile.TypeRunStart {
			c := evs[0]
			rt.start = &c
			rt.starts = append(rt.starts, RankStartOf(&c))
		}
		if err := rt.discover(); err != nil {
			return nil, err
		}
		if len(rt.ranks) == 1 && (rt.start == nil || !rt.start.Distributed()) {
			// a run of one process: its journal's events as they are
			rt.ended = slices.ContainsFunc(evs, func(e profile.Event) bool { return e.T == profile.TypeRunEnd })
			return evs, nil
		}
		lists = append(lists, rt.take(r, evs))
	}
	out := mergeTimed(lists)
	// rank 0's run_end comes last, once the other ranks are read out
	if n := len(out); n > 0 && rt.held == nil {
		for i := range out {
			if out[i].T == profile.TypeRunEnd {
				e := out[i]
				rt.held = &e
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
	}
	if rt.held != nil {
		lists = lists[:0]
		for _, r := range rt.ranks[1:] {
			evs, err := r.t.Poll()
			if err != nil {
				return out, err
			}
			lists = append(lists, rt.take(r, evs))
		}
		out = append(out, mergeTimed(lists)...)
		out = append(out, *rt.held)
		rt.held, rt.ended = nil, true
	}
	return out, nil
}

// timedEvent is an event with its time on the merged clock.
type timedEvent struct {
	at int64
	e  profile.Event
}

// mergeTimed merges lists that are each in time order into one (ties: the
// earlier list).
func mergeTimed(lists [][]timedEvent) []profile.Event {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	out := make([]profile.Event, 0, n)
	idx := make([]int, len(lists))
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if idx[i] < len(l) && (best < 0 || l[idx[i]].at < lists[best][idx[best]].at) {
				best = i
			}
		}
		out = append(out, lists[best][idx[best]].e)
		idx[best]++
	}
	return out
}

// take rewrites a rank's new events for the merged run and returns those
// it keeps, timed; a rank other than 0 waits for rank 0's run_start.
func (rt *RunTailer) take(r *rankTail, evs []profile.Event) []timedEvent {
	if r.rank != 0 {
		if r.first == nil && len(evs) > 0 && evs[0].T == profile.TypeRunStart {
			c := evs[0]
			r.first = &c
			rs := RankStartOf(&c)
			rs.Rank = r.rank
			rt.starts = append(rt.starts, rs)
		}
		if rt.start == nil {
			r.pending = append(r.pending, evs...)
			return nil
		}
		evs = append(r.pending, evs...)
		r.pending = nil
	}
	if !r.placed && rt.start != nil {
		r.view = rankView{rank: r.rank, multi: rt.start.Distributed() || len(rt.ranks) > 1}
		if r.rank != 0 {
			r.view.offset = wallOffset(rt.start, r.first)
		}
		r.at, r.placed = r.view.offset, true
	}
	out := make([]timedEvent, 0, len(evs))
	for i := range evs {
		e := evs[i]
		if r.view.keep(&e) {
			r.at = EventTime(&e, r.at)
			out = append(out, timedEvent{at: r.at, e: e})
		}
	}
	return out
}

// Next waits until new events arrive and returns them (see Tailer.Next):
// io.EOF after rank 0's run_end, ErrWriterGone when the run's writer is
// gone without it, ctx's error when ctx is done.
func (rt *RunTailer) Next(ctx context.Context) ([]profile.Event, error) {
	if rt.ended {
		return nil, io.EOF
	}
	return waitPoll(ctx, rt.opts, rt.Poll)
}

// Close releases the journals.
func (rt *RunTailer) Close() error {
	var errs []error
	for _, r := range rt.ranks {
		errs = append(errs, r.t.Close())
	}
	return errors.Join(errs...)
}
