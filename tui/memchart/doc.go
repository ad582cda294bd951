// Package memchart draws a run's per-batch peak device memory (mem
// events, in journal order) against its budget. Training batches and
// evaluation chunks are separate panes on one scale, each with its own x
// axis (the epochs it spans and how many points it has); the curve is in
// braille dots (or '*' cells in ASCII mode). The budget line is drawn
// once a budget is known, from the mem events or, before any, from
// run_start's config; an OOM is a mark at the bytes its batch asked for
// (live plus the refused allocation); a memory guard's action is a mark
// at the batch's predicted peak, above the actual peak the curve shows.
// Points that do not fit in a pane's width are folded: a column shows the
// range of the peaks it covers.
package memchart
