// Package dashboard is the workbench's Run dashboard: one session's runs,
// live while they run and as a replay once they are recorded, with the
// same view either way. It shows per-run progress and summary figures,
// per-lane stage timelines, per-batch memory against the budget, history
// staleness and loss and accuracy; a replay adds pause, speed and seek.
//
// It is a common.Screen: the root model creates it with New on
// common.OpenDashboardMsg, forwards messages to Update, draws View inside
// its frame, calls SetSize on resize and Close when it leaves the stack.
// Quit and Help are the root's keys; the dashboard handles the dashboard
// section of common.KeyMap, c (compare its session) and back, which
// closes a span's details before it leaves.
//
// Events are digested in the background (package runstate); the
// dashboard redraws on a tick of at most common.Options.MaxFPS per second
// and only when something changed, so an idle dashboard costs almost
// nothing.
package dashboard
