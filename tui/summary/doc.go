// Package summary is the dashboard's table of runs: per run its status,
// progress in epochs with an estimate of the time left, mean epoch time,
// speedup over the baseline run, test accuracy, overlap, efficiency, data
// wait, the totals of the top-level stages and the peak memory. The
// figures come from profile.Aggregator through runstate, the same ones
// `gnnscope compare` prints, and update as events arrive. Columns are
// dropped, least important first, when the width is short.
package summary
