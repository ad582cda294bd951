// Package timeline draws a run's spans over the last seconds of its clock:
// one row per lane (compute, copy, eval, sampler/i, ...), each cell
// colored by the stage that covered most of it (with NO_COLOR, the stage's
// letter), so stages running at the same time on different lanes show as
// overlap. Times are kept in nanoseconds and mapped to cells without
// rounding to seconds, so any window down to 100 ms is exact to the
// cell. The window zooms in and out; a legend names the stages.
package timeline
