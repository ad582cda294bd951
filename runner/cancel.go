package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	// Orphans are runs whose worker was gone but whose command left
	// processes behind (a worker killed with SIGKILL): they were killed.
	Orphans []string `json:"orphans"`
}

// Cancel stops a session: it marks the session canceled (no run starts
// any more), sends SIGTERM to the sequencer and to the process group of
// every running worker (which stop training and end their journals with
// status canceled), marks runs that have not started canceled, and kills
// what the commands of runs whose worker is gone left behind. It does
// not wait for the workers to finish; RunStates tells when they have.
// ref names the session as every command does: its id, a unique prefix of
// it, or "last" (see sessions.Store.MatchSession).
//
// The processes are found by their pid files and, where those are
// missing (a full disk), by their command lines (on Linux). A canceled
// marker that cannot be written (a full disk again) does not stop the
// signals: its error is reported after them.
func Cancel(store *sessions.Store, ref string) (*CancelReport, error) {
	return cancelSession(store, ref, writeCanceled)
}

// writeCanceled writes the session's canceled marker, the time it was
// canceled. An empty marker (the disk full after it was created) marks
// the session canceled all the same.
func writeCanceled(s *sessions.Session) error {
	stamp := []byte(time.Now().UTC().Format(time.RFC3339Nano) + "\n")
	f, err := sessions.OpenRegularFile(filepath.Join(s.Dir(), canceledFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(stamp)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// cancelSession is Cancel with the function that writes the canceled
// marker.
func cancelSession(store *sessions.Store, ref string, mark func(*sessions.Session) error) (*CancelReport, error) {
	s, err := store.MatchSession(ref)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	id := s.ID()
	rep := &CancelReport{Session: s.ID(), Signaled: []string{}, Marked: []string{}, Finished: []string{}, Orphans: []string{}}
	markErr := mark(s)
	var errs []error
	seqPids, runPids := sessionProcs(store.Root(), id)
	for _, pid := range withPidFile(seqPids, filepath.Join(s.Dir(), sequencerPid)) {
		if err := terminate(pid); err != nil {
			errs = append(errs, fmt.Errorf("sequencer (pid %d): %w", pid, err))
		} else {
			rep.Sequencer = true
		}
	}
	states, err := RunStates(s)
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range states {
		switch {
		case r.Status == profile.StatusRunning:
			if err := signalRun(s, r.Run, runPids[r.Run]); err != nil {
				errs = append(errs, err)
				continue
			}
			rep.Signaled = append(rep.Signaled, r.Run)
		case r.Status == profile.StatusPending, r.Status == profile.StatusCanceled && r.Size == 0:
			marked, err := markNotStarted(s, r.Run, profile.StatusCanceled, errCanceledBeforeStart)
			if err != nil {
				errs = append(errs, fmt.Errorf("run %s: %w", r.Run, err))
			}
			if marked {
				rep.Marked = append(rep.Marked, r.Run)
			}
		case r.Finished() || r.Status == profile.StatusCrashed:
			rep.Finished = append(rep.Finished, r.Run)
		}
		if r.Status != profile.StatusRunning && killOrphans(TrainerProcs(s, r.Run)) > 0 {
			rep.Orphans = append(rep.Orphans, r.Run)
		}
	}
	if markErr != nil {
		errs = append(errs, fmt.Errorf("mark the session canceled (the processes were signaled): %w", markErr))
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("cancel session %s: %w", id, errors.Join(errs...))
	}
	return rep, nil
}

// killOrphans sends SIGKILL to the processes pids (a command's, whose
// worker is gone: nobody else would end them) and returns how many it
// reached.
func killOrphans(pids []int) int {
	n := 0
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
			n++
		}
	}
	return n
}

// withPidFile adds to pids the process of the pid file at path, if it is
// alive.
func withPidFile(pids []int, path string) []int {
	if p, err := readProc(path); err == nil {
		if alive, _ := p.Alive(); alive && !slices.Contains(pids, p.Pid) {
			pids = append(pids, p.Pid)
		}
	}
	return pids
}

// signalRun sends SIGTERM to the worker of a running run: the processes
// found for it (pids) and the one of its pid file.
func signalRun(s *sessions.Session, run string, pids []int) error {
	pids = withPidFile(pids, s.PidPath(run))
	if len(pids) == 0 {
		return fmt.Errorf("run %s is running but its process was not found", run)
	}
	var errs []error
	for _, pid := range pids {
		if err := terminate(pid); err != nil {
			errs = append(errs, fmt.Errorf("run %s (pid %d): %w", run, pid, err))
		}
	}
	if len(errs) == len(pids) {
		return errors.Join(errs...)
	}
	return nil
}

// Active reports whether any run of the list may still change: running or
// pending. (A run whose state is unknown, written on another host, is not
// waited for.)
func Active(states []sessions.RunState) bool {
	for _, r := range states {
		switch r.Status {
		case profile.StatusRunning, profile.StatusPending:
			return true
		}
	}
	return false
}
