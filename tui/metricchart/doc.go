// Package metricchart draws a run's metric series (loss, accuracies) as
// line charts: per epoch for epoch-level metrics, up to the configured
// number of epochs so the curve grows from the left as the run goes, or
// per batch for batch-level ones (folded to the mean of each column when
// there are more batches than columns). Braille lines with color; with
// NO_COLOR or in ASCII mode each series gets its own marker character so
// the series stay apart.
package metricchart
