// Package stalechart shows how stale a run's historical embeddings are
// (GNNAutoScale): per layer, the mean and largest age in optimizer steps
// of the history rows its batches pulled, the last measured history
// error, and the histogram of ages in the log2 buckets of the stale
// events (0, 1, 2-3, 4-7, ...) as bars; and, over the batches (one stale
// event each), every layer's mean age as a line in its color and its
// largest age as '^' marks, on a scale from 0 to the largest age seen,
// which only grows. The plot goes beside the table in a wide area, under
// it when the height allows both; a short one keeps the table. Runs
// without histories have no such events and the dashboard does not show
// this chart for them.
package stalechart
