// Package tui is the gnnscope workbench, a Bubble Tea application. The
// root model owns the shared context (common.Common) and routes between
// the screens, one component package each: the sessions list
// (sessionlist), the new-experiment form (newexp), the Run dashboard
// (dashboard) and the comparison (compare). Screens ask for navigation
// with the typed messages of package common; the root keeps a stack of
// screens for esc, the help overlay (?) listing every key, and a status
// bar.
//
// The root never repaints on a timer: Bubble Tea v2 renders only what
// changed, at most common.Options.MaxFPS (10) frames per second, and
// components tick only while something they show is live. Quitting leaves
// background runs running; the next start finds them and follows them
// again.
package tui
