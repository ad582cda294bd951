// Package overlay draws the dashboard's overlay: the loss, accuracy and
// memory of every run of a session in one chart each, one color and one
// legend entry per run (and one marker character per run without
// color), on ntcharts through tui/plot.
package overlay
