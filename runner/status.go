package runner

import (
	"slices"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// StatusEmpty is the status of a session without runs (SessionStatus).
const StatusEmpty = "empty"

// SessionStatus is a session's status from its runs' statuses (as
// RunStates reports them): running if a run is running or pending; else
// the first of crashed, oom, failed, canceled and unknown that a run has;
// else any other status a run has; else ok. A session without runs is
// StatusEmpty.
func SessionStatus(statuses []string) string {
	if len(statuses) == 0 {
		return StatusEmpty
	}
	for _, st := range statuses {
		if st == sessions.StatusRunning || st == StatusPending {
			return sessions.StatusRunning
		}
	}
	for _, bad := range []string{sessions.StatusCrashed, profile.StatusOOM, profile.StatusFailed, profile.StatusCanceled, sessions.StatusUnknown} {
		if slices.Contains(statuses, bad) {
			return bad
		}
	}
	for _, st := range statuses {
		if st != profile.StatusOK {
			return st
		}
	}
	return profile.StatusOK
}
