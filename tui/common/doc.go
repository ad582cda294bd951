// Package common holds what every screen and component of the workbench
// shares: the context (terminal size, styles, keymap, options, the session
// store), the styles and glyphs (with NO_COLOR and ASCII variants), the
// keymap, the Screen interface every screen of the root's stack
// implements, and the typed messages screens use to ask the root model to
// navigate. Components take a *Common and never reach for globals.
package common
