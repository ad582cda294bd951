package sessions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// A distributed run (torchrun, DDP) writes one journal per rank: rank 0
// writes the run's own journal, runs/<run>.jsonl, and rank R > 0 writes
// runs/<run>.rank<R>.jsonl. Every rank's run_start carries its rank and
// the world size. Readers merge the ranks into the one run <run>: its
// events come in time order, each span's lane named after its rank
// (profile.RankLane: "rank1/compute", rank 0 included), and each rank's
// times moved onto rank 0's clock by the difference of the ranks'
// wall-clock starts (the collector of ranks on other machines has moved
// each rank's wall onto its own clock: docs/collector.md). The run's
// status is rank 0's (its run_end); the other ranks' run_start and
// run_end are not part of the merged events.

// rankInfix separates a run's name from a rank in a rank journal's name.
const rankInfix = ".rank"

// RankJournalPath returns the journal of rank r of a distributed run:
// runs/<run>.rank<r>.jsonl, or the run's own journal for rank 0.
func (s *Session) RankJournalPath(run string, r int) string {
	if r == 0 {
		return s.JournalPath(run)
	}
	return s.JournalPath(run + rankInfix + strconv.Itoa(r))
}

// SplitRankRun splits the name of a rank journal's run, "<run>.rank<R>"
// with R > 0 written without leading zeros, into run and R; ok is false
// for any other name. Such names are not runs of their own.
func SplitRankRun(name string) (run string, rank int, ok bool) {
	i := strings.LastIndex(name, rankInfix)
	if i <= 0 {
		return name, 0, false
	}
	digits := name[i+len(rankInfix):]
	if digits == "" || digits[0] == '0' || len(digits) > 9 {
		return name, 0, false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return name, 0, false
		}
	}
	r, _ := strconv.Atoi(digits)
	return name[:i], r, true
}

// RankJournal is one rank's journal of a run.
type RankJournal struct {
	Rank int
	Path string
}

// RankJournals returns the journals of a run's ranks: rank 0's (the
// run's own journal, listed whether it exists or not) and then those of
// the other ranks that exist, by rank. A run that is not distributed
// has rank 0's alone.
func (s *Session) RankJournals(run string) ([]RankJournal, error) {
	out := []RankJournal{{Rank: 0, Path: s.JournalPath(run)}}
	ents, err := os.ReadDir(s.RunsDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		return out, fmt.Errorf("ranks of run %s: %w", run, err)
	}
	for _, ent := range ents {
		name, ok := strings.CutSuffix(ent.Name(), journalExt)
		if !ok {
			continue
		}
		if base, r, ok := SplitRankRun(name); ok && base == run {
			out = append(out, RankJournal{Rank: r, Path: s.JournalPath(name)})
		}
	}
	slices.SortFunc(out[1:], func(a, b RankJournal) int { return a.Rank - b.Rank })
	return out, nil
}

// rankView turns one rank's events into the merged run's: lanes named
// after the rank, times on rank 0's clock.
type rankView struct {
	rank   int
	multi  bool  // name lanes after the rank
	offset int64 // ns added to the rank's times
	lanes  map[string]string
}

// rankLane returns profile.RankLane(rank, lane), kept in *lanes so that
// each of a rank's lanes is named once.
func rankLane(lanes *map[string]string, rank int, lane string) string {
	l, ok := (*lanes)[lane]
	if !ok {
		l = profile.RankLane(rank, lane)
		if *lanes == nil {
			*lanes = map[string]string{}
		}
		(*lanes)[lane] = l
	}
	return l
}

// keep reports whether the merged run keeps e (the ranks other than 0
// contribute neither run_start nor run_end) and rewrites it.
func (v *rankView) keep(e *profile.Event) bool {
	switch e.T {
	case profile.TypeRunStart, profile.TypeRunEnd:
		return v.rank == 0
	case profile.TypeSpan:
		e.Start += v.offset
		if v.multi {
			e.Lane = rankLane(&v.lanes, v.rank, e.Lane)
		}
	case profile.TypeGPU, profile.TypeClock:
		e.Ts += v.offset
	}
	return true
}

// wallOffset returns rank's wall-clock start minus rank 0's, in ns (0
// when either run_start lacks a readable wall time).
func wallOffset(rank0, rank *profile.Event) int64 {
	if rank0 == nil || rank == nil || rank0.T != profile.TypeRunStart || rank.T != profile.TypeRunStart {
		return 0
	}
	w0, err0 := rank0.WallTime()
	w, err := rank.WallTime()
	if err0 != nil || err != nil {
		return 0
	}
	return w.Sub(w0).Nanoseconds()
}

// rankReader reads one rank's journal for a runReader.
type rankReader struct {
	RankJournal
	view  rankView
	f     *os.File
	jr    *journalReader
	size  int64 // bytes to read; < 0: to the end of the file
	first profile.Event
	head  profile.Event
	has   bool
	at    int64 // head's time on the merged clock (see EventTime)
}

// runReader reads a run's events, its ranks' journals merged (see the
// comment at the top of this file): the pull form of a journal read,
// like journalReader, for a whole run.
type runReader struct {
	ranks []*rankReader
}

// openRunReader opens the journals (rank 0's first, which must exist);
// sizes, when given, limit how much of each is read.
func openRunReader(js []RankJournal, sizes []int64) (*runReader, error) {
	rr := &runReader{}
	for i, j := range js {
		f, err := OpenRegular(j.Path)
		if err != nil {
			if i > 0 && errors.Is(err, os.ErrNotExist) {
				continue // a rank journal removed since it was listed
			}
			rr.close()
			return nil, fmt.Errorf("read journal %s: %w", j.Path, err)
		}
		k := &rankReader{RankJournal: j, f: f, size: -1}
		if sizes != nil {
			k.size = sizes[i]
		}
		rr.ranks = append(rr.ranks, k)
	}
	if err := rr.reset(); err != nil {
		rr.close()
		return nil, err
	}
	return rr, nil
}

// reset starts reading every rank from its start again.
func (rr *runReader) reset() error {
	for _, k := range rr.ranks {
		var r io.Reader = k.f
		if k.size >= 0 {
			r = io.NewSectionReader(k.f, 0, k.size)
		} else if _, err := k.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("read journal %s: %w", k.Path, err)
		}
		if k.jr == nil {
			k.jr = newJournalReader(r)
			k.jr.name = k.Path
		} else {
			k.jr.reset(r)
		}
		k.has, k.first = false, profile.Event{}
		ok, err := k.jr.next(&k.first)
		if err != nil {
			return fmt.Errorf("read journal %s: %w", k.Path, err)
		}
		if ok {
			k.head, k.has = k.first, true
		}
	}
	var first0 *profile.Event
	if len(rr.ranks) > 0 && rr.ranks[0].Rank == 0 && rr.ranks[0].has {
		first0 = &rr.ranks[0].first
	}
	multi := len(rr.ranks) > 1 || (first0 != nil && first0.Distributed())
	for _, k := range rr.ranks {
		k.view = rankView{rank: k.Rank, multi: multi, lanes: k.view.lanes}
		if k.Rank != 0 && k.has {
			k.view.offset = wallOffset(first0, &k.first)
		}
		k.at = k.view.offset
		if k.has {
			if err := k.settle(); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle rewrites the head, skipping the events the merged run does not
// keep, and times it.
func (k *rankReader) settle() error {
	for k.has && !k.view.keep(&k.head) {
		if err := k.advance(); err != nil {
			return err
		}
	}
	if k.has {
		k.at = EventTime(&k.head, k.at)
	}
	return nil
}

// advance reads the rank's next event into head (unrewritten).
func (k *rankReader) advance() error {
	ok, err := k.jr.next(&k.head)
	if err != nil {
		return fmt.Errorf("read journal %s: %w", k.Path, err)
	}
	k.has = ok
	return nil
}

// next decodes the run's next event into e: the earliest head of the
// ranks (ties: the lower rank), rank 0's run_end after every other
// rank's last event; false after the last.
func (rr *runReader) next(e *profile.Event) (bool, error) {
	var best *rankReader
	for _, k := range rr.ranks {
		if k.has && (best == nil || k.at < best.at || best.head.T == profile.TypeRunEnd) {
			best = k
		}
	}
	if best == nil {
		return false, nil
	}
	*e = best.head
	if err := best.advance(); err != nil {
		return false, err
	}
	if err := best.settle(); err != nil {
		return false, err
	}
	return true, nil
}

// stats returns what reading met, summed over the ranks (the first
// malformed line is the lowest rank's).
func (rr *runReader) stats() ReadStats {
	var st ReadStats
	for _, k := range rr.ranks {
		s := k.jr.st
		st.Lines += s.Lines
		st.Events += s.Events
		st.Malformed += s.Malformed
		st.Bytes += s.Bytes
		st.Torn = st.Torn || s.Torn
		if st.FirstMalformed == 0 && s.FirstMalformed > 0 {
			st.FirstMalformed, st.FirstError = s.FirstMalformed, s.FirstError
			if k.Rank > 0 {
				st.FirstError = fmt.Sprintf("rank %d: %s", k.Rank, s.FirstError)
			}
		}
	}
	return st
}

// sizes returns the bytes of each rank's journal read so far (after a
// whole pass: the bytes that hold its events).
func (rr *runReader) sizes() []int64 {
	out := make([]int64, len(rr.ranks))
	for i, k := range rr.ranks {
		out[i] = k.jr.st.Bytes
	}
	return out
}

// journals returns the journals read, in the order of sizes.
func (rr *runReader) journals() []RankJournal {
	out := make([]RankJournal, len(rr.ranks))
	for i, k := range rr.ranks {
		out[i] = k.RankJournal
	}
	return out
}

// close closes the journals.
func (rr *runReader) close() error {
	var first error
	for _, k := range rr.ranks {
		if k.f == nil {
			continue
		}
		if err := k.f.Close(); err != nil && first == nil {
			first = err
		}
		k.f = nil
	}
	return first
}

// openRun opens a reader of a run's merged events.
func (s *Session) openRun(run string) (*runReader, error) {
	if err := ValidName(run); err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	js, err := s.RankJournals(run)
	if err != nil {
		return nil, err
	}
	return openRunReader(js, nil)
}

// ScanRun reads a run's events, its ranks' journals merged (a run that is
// not distributed: its journal), calling fn with each in order (the event
// is reused between calls). Malformed lines are skipped and counted; an
// error from fn stops the scan and is returned. A run without a journal
// is an error wrapping os.ErrNotExist.
func (s *Session) ScanRun(run string, fn func(e *profile.Event) error) (ReadStats, error) {
	rr, err := s.openRun(run)
	if err != nil {
		return ReadStats{}, err
	}
	defer rr.close()
	var e profile.Event
	for {
		ok, err := rr.next(&e)
		if err != nil || !ok {
			return rr.stats(), err
		}
		if err := fn(&e); err != nil {
			return rr.stats(), err
		}
	}
}

// ReadRun reads all of a run's events, its ranks merged (see ScanRun).
func (s *Session) ReadRun(run string) ([]profile.Event, ReadStats, error) {
	var evs []profile.Event
	st, err := s.ScanRun(run, func(e *profile.Event) error {
		evs = append(evs, *e)
		return nil
	})
	return evs, st, err
}

// SummarizeRun aggregates a run in one streaming pass, its ranks'
// journals merged (see SummarizeJournal, ScanRun).
func (s *Session) SummarizeRun(run string) (JournalSummary, error) {
	acc := newJournalAcc()
	st, err := s.ScanRun(run, func(e *profile.Event) error {
		acc.one[0] = *e
		acc.add()
		return nil
	})
	return acc.result(st), err
}
