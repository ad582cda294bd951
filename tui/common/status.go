package common

import (
	"charm.land/lipgloss/v2"

	"github.com/gnnscope/gnnscope/profile"
)

// Status returns the style every view draws a run's or a session's
// status in: ok in OK's color; what is under way (running, pending) in
// Warn's; what did not run or cannot be told (canceled, not started,
// empty, unknown) muted; a run that stopped badly or could not be read
// (oom, failed, crashed, partial, error) or is no whole session (broken) in Error's; the dashboard's waiting and
// replaying plain. A status not named here is drawn as an error.
func (s *Styles) Status(status profile.Status) lipgloss.Style {
	st, _ := s.status(status)
	return st
}

// status is Status, and whether it names status.
func (s *Styles) status(status profile.Status) (lipgloss.Style, bool) {
	switch status {
	case profile.StatusOK:
		return s.OK, true
	case profile.StatusRunning, profile.StatusPending:
		return s.Warn, true
	case profile.StatusCanceled, profile.StatusNotStarted, profile.StatusEmpty, profile.StatusUnknown:
		return s.Muted, true
	case profile.StatusOOM, profile.StatusFailed, profile.StatusCrashed, profile.StatusPartial, profile.StatusError, profile.StatusBroken:
		return s.Error, true
	case profile.StatusWaiting, profile.StatusReplaying:
		return s.App, true
	}
	return s.Error, false
}
