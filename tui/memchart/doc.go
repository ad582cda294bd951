// Package memchart draws a run's per-batch peak device memory (mem
// events, in journal order) against its budget: the curve in braille dots
// (or '*' cells in ASCII mode), the budget as a line, each OOM as a mark
// at the batch where it happened, and the axis in binary units. Batches
// that do not fit in the width are folded: a column shows the range of
// the peaks it covers.
package memchart
