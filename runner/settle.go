package runner

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// errStoppedAsStarted is the error of a run whose worker a cancel stopped
// before it could end the run's journal.
var errStoppedAsStarted = errors.New("canceled as it started: its worker was stopped before it could end its journal")

// settleCanceled ends, as canceled, the journal of a run of a canceled
// session whose worker is gone without ending it: a cancel that landed
// as the worker started (before it could handle the signal) is a cancel,
// not a crash. A run without journal is marked canceled before it
// started; one that ended keeps its run_end.
func settleCanceled(s *sessions.Session, run string, log io.Writer) {
	rs, err := s.RunState(run)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := markNotStarted(s, run, profile.StatusCanceled, errCanceledBeforeStart); err != nil {
			logf(log, "run %s: mark canceled: %v", run, err)
		}
		return
	case err != nil:
		logf(log, "run %s: %v", run, err)
		return
	case rs.Status != profile.StatusCrashed && rs.Status != profile.StatusUnknown:
		return
	}
	path := s.JournalPath(run)
	hasStart, end, err := journalEnds(path)
	if err != nil || end != nil {
		return
	}
	jw, err := sessions.OpenJournal(path)
	if err != nil {
		logf(log, "run %s: end canceled: %v", run, err)
		return
	}
	var evs []profile.Event
	if !hasStart {
		evs = append(evs, profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: run, Session: s.ID(),
			Variant: variantOf(s, run), Wall: time.Now().UTC().Format(time.RFC3339Nano)})
	}
	evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusCanceled, Error: errStoppedAsStarted.Error()})
	err = jw.WriteEvents(evs)
	if cerr := jw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		logf(log, "run %s: end canceled: %v", run, err)
		return
	}
	logf(log, "run %s: %v", run, errStoppedAsStarted)
}
