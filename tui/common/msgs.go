package common

// OpenDashboardMsg asks the root to show a session's runs, live when they
// are running and as a replay otherwise (Replay forces a replay).
type OpenDashboardMsg struct {
	Session string
	Replay  bool
}

// OpenCompareMsg asks the root to compare runs ("session/run" references,
// or session ids meaning all their runs).
type OpenCompareMsg struct{ Refs []string }

// OpenNewMsg asks the root to show the new-experiment form, filled with
// the experiment of session From when it is set (a copy to edit).
type OpenNewMsg struct{ From string }

// BackMsg asks the root to return to the previous screen.
type BackMsg struct{}

// LaunchedMsg reports a session launched in the background.
type LaunchedMsg struct {
	Session string
	Dir     string
	Err     error
}

// StatusMsg shows a line in the status bar; Err marks it as an error.
type StatusMsg struct {
	Text string
	Err  bool
}
