package runner

import (
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// SessionStatus is a session's status from its runs' statuses (as
// RunStates reports them): running if a run is running or pending; else
// the first of crashed, oom, failed, partial, canceled and unknown that a
// run has;
// else any other status a run has; else ok. A session without runs is
// profile.StatusEmpty.
func SessionStatus(statuses []profile.Status) profile.Status {
	if len(statuses) == 0 {
		return profile.StatusEmpty
	}
	for _, st := range statuses {
		if st == profile.StatusRunning || st == profile.StatusPending {
			return profile.StatusRunning
		}
	}
	for _, bad := range []profile.Status{profile.StatusCrashed, profile.StatusOOM, profile.StatusFailed, profile.StatusPartial, profile.StatusCanceled, profile.StatusUnknown} {
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
