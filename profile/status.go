package profile

// Status is a run's status, or a session's (the worst of its runs'). A
// finished run's status is run_end's "status" (StatusOK, StatusOOM,
// StatusFailed, StatusCrashed, StatusCanceled, StatusPartial: the strings
// on disk);
// readers and views derive the others for runs without run_end. Every
// status is defined here and listed by Statuses; tui/common styles each.
type Status string

// The statuses a run_end event carries.
const (
	StatusOK       Status = "ok"       // the run finished
	StatusOOM      Status = "oom"      // the run stopped on an out-of-memory error
	StatusFailed   Status = "failed"   // the run stopped on another error
	StatusCrashed  Status = "crashed"  // no run_end and the process is gone (set by readers)
	StatusCanceled Status = "canceled" // the run was canceled by the user
	// StatusPartial: the run went on, but its journal lost events (a write
	// failed, as on a full disk): what it kept is a prefix or has holes, so
	// its figures are not the run's. Written in run_end when the writer
	// could still write it, else in its exit record.
	StatusPartial Status = "partial"
)

// The statuses readers and views derive for a run without run_end, or
// for a session.
const (
	// StatusRunning: no run_end yet and the writer process is alive.
	StatusRunning Status = "running"
	// StatusPending: a launched run that has not started yet.
	StatusPending Status = "pending"
	// StatusNotStarted: a run a comparison names that has no journal.
	StatusNotStarted Status = "not started"
	// StatusUnknown: no run_end and no way to check the writer (no pid
	// file, or it was written on another host).
	StatusUnknown Status = "unknown"
	// StatusEmpty: a session without runs.
	StatusEmpty Status = "empty"
	// StatusError: the run's feed or the session could not be read.
	StatusError Status = "error"
	// StatusWaiting: a run followed before its run_start arrived.
	StatusWaiting Status = "waiting"
	// StatusReplaying: a recorded run being replayed.
	StatusReplaying Status = "replaying"
	// StatusBroken: a folder of the store that is no whole session (an
	// interrupted launch or removal, or a name the store does not make).
	StatusBroken Status = "broken"
)

// Statuses lists every status, those of run_end first.
func Statuses() []Status {
	return []Status{
		StatusOK, StatusOOM, StatusFailed, StatusCrashed, StatusCanceled, StatusPartial,
		StatusRunning, StatusPending, StatusNotStarted, StatusUnknown,
		StatusEmpty, StatusError, StatusWaiting, StatusReplaying, StatusBroken,
	}
}

// Stopped reports whether the status stops a run early (failed, oom,
// crashed, canceled) or lost part of its record (partial): whatever
// figures the run has are partial.
func (s Status) Stopped() bool {
	switch s {
	case StatusFailed, StatusOOM, StatusCrashed, StatusCanceled, StatusPartial:
		return true
	}
	return false
}

// Timed reports whether a run of this status may carry a speedup and be
// ranked: it ended ok, or it still runs. A run that Stopped may not.
func (s Status) Timed() bool { return s == StatusOK || s == StatusRunning }

// String returns the status as written on disk and shown.
func (s Status) String() string { return string(s) }
