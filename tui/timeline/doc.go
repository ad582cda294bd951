// Package timeline draws a run's spans over a window of its clock: one row
// per lane (compute, copy, eval, sampler/i, ...), each cell colored by the
// stage that covered most of it (with NO_COLOR, the stage's letter), so
// stages running at the same time on different lanes show as overlap. A
// stage present in a cell that neither it nor its neighbors show (a short
// sample or transfer at coarse zoom) is drawn as a marker, its letter, so
// that no stage vanishes at any zoom. Times are kept in nanoseconds and
// mapped to cells without rounding, so any window down to a microsecond
// is exact to the cell.
//
// The window follows the end of the run until it is panned; it zooms in
// steps from the length on display, around a cursor once the cursor
// shows. The span under the cursor (or a click) can be selected and its
// details read; the first, last or any epoch can be shown; and the
// per-epoch bars (ToggleBars) show where each epoch's time went, stage by
// stage. A legend names the stages.
package timeline
