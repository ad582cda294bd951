package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// CancelReport says what Cancel did.
type CancelReport struct {
	Session   string   `json:"session"`
	Sequencer bool     `json:"sequencer"` // SIGTERM sent to the sequencer
	Signaled  []string `json:"signaled"`  // running runs sent SIGTERM
	Marked    []string `json:"marked"`    // pending runs marked canceled
	Finished  []string `json:"finished"`  // runs that had already ended
}

// Cancel stops a session: it marks the session canceled (no run starts
// any more), sends SIGTERM to the sequencer and to the process group of
// every running worker (which stop training and end their journals with
// status canceled), and marks runs that have not started canceled. It does
// not wait for the workers to finish; RunStates tells when they have.
// ref names the session as every command does: its id, a unique prefix of
// it, or "last" (see sessions.Store.MatchSession).
func Cancel(store *sessions.Store, ref string) (*CancelReport, error) {
	s, err := store.MatchSession(ref)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	id := s.ID()
	rep := &CancelReport{Session: s.ID(), Signaled: []string{}, Marked: []string{}, Finished: []string{}}
	stamp := []byte(time.Now().UTC().Format(time.RFC3339Nano) + "\n")
	if err := os.WriteFile(filepath.Join(s.Dir(), canceledFile), stamp, 0o644); err != nil {
		return rep, fmt.Errorf("cancel session %s: %w", id, err)
	}
	var errs []error
	if p, err := readProc(filepath.Join(s.Dir(), sequencerPid)); err == nil {
		if alive, _ := p.Alive(); alive {
			if err := terminate(p.Pid); err != nil {
				errs = append(errs, fmt.Errorf("sequencer (pid %d): %w", p.Pid, err))
			} else {
				rep.Sequencer = true
			}
		}
	}
	states, err := RunStates(s)
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range states {
		switch {
		case r.Status == sessions.StatusRunning && r.Pid > 0:
			if err := terminate(r.Pid); err != nil {
				errs = append(errs, fmt.Errorf("run %s (pid %d): %w", r.Run, r.Pid, err))
				continue
			}
			rep.Signaled = append(rep.Signaled, r.Run)
		case r.Status == StatusPending, r.Status == profile.StatusCanceled && r.Size == 0:
			marked, err := markNotStarted(s, r.Run, profile.StatusCanceled, errCanceledBeforeStart)
			if err != nil {
				errs = append(errs, fmt.Errorf("run %s: %w", r.Run, err))
			}
			if marked {
				rep.Marked = append(rep.Marked, r.Run)
			}
		case r.Finished() || r.Status == sessions.StatusCrashed:
			rep.Finished = append(rep.Finished, r.Run)
		}
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("cancel session %s: %w", id, errors.Join(errs...))
	}
	return rep, nil
}

// Active reports whether any run of the list may still change: running or
// pending. (A run whose state is unknown, written on another host, is not
// waited for.)
func Active(states []sessions.RunState) bool {
	for _, r := range states {
		switch r.Status {
		case sessions.StatusRunning, StatusPending:
			return true
		}
	}
	return false
}
