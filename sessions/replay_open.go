package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// journalTrack reads a run's journals (its ranks', merged) once, without
// keeping its events: it counts them, takes the time of the last one (in
// prev) and the bytes of each journal that hold them, and returns the
// track (named run) with its first event, which says
// the run's name and start. The journals are opened again when the
// track's first event is due.
func journalTrack(js []RankJournal, run string) (*replayTrack, profile.Event, error) {
	rr, err := openRunReader(js, nil)
	if err != nil {
		return nil, profile.Event{}, err
	}
	tr := &replayTrack{run: run, rr: rr}
	var first, e profile.Event
	for {
		ok, err := rr.next(&e)
		if err != nil {
			rr.close()
			return nil, first, err
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
	// delivery reads them again, no further than this pass went
	tr.js, tr.sizes = rr.journals(), rr.sizes()
	return tr, first, tr.close()
}

// OpenReplay returns a replay of one journal file (as it is now: a replay
// does not follow a journal that is still being written; use Live for
// that). The track is named after run_start's run, else the file.
func OpenReplay(path string, opts ReplayOptions) (*Replay, error) {
	tr, first, err := journalTrack([]RankJournal{{Path: path}}, strings.TrimSuffix(filepath.Base(path), journalExt))
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
// journal if runs is empty; a distributed run's ranks merged, see
// ScanRun), merged on one timeline: each run's clock
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
		js, err := s.RankJournals(run)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("replay session %s: %w", s.ID(), err)
		}
		tr, ev, err := journalTrack(js, run)
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
