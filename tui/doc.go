// Package tui is the gnnscope workbench, a Bubble Tea application. The
// root model owns the shared context (common.Common) and a stack of
// screens (common.Screen), one component package each: the sessions list
// (sessionlist), the new-experiment form (newexp), the Run dashboard
// (dashboard) and the comparison (compare). The stack (app.go) knows them
// only as screens: it routes keys and the mouse to the top one, other
// messages to all, and draws the header, the help overlay (?) listing
// every key, and a status bar. Screens own their keys, back included, and
// ask for navigation with the typed messages of package common; the
// screens those messages open are built in screens.go, and a screen that
// can build another pushes it with common.PushMsg.
//
// The root never repaints on a timer: Bubble Tea v2 renders only what
// changed, at most common.Options.MaxFPS (10) frames per second, and
// components tick only while something they show is live. Quitting leaves
// background runs running; the next start finds them and follows them
// again.
package tui
