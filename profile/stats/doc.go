// Package stats holds the statistics behind speedups: medians of epoch
// times and the bootstrap intervals of their ratios. It imports nothing of
// the project, so every view computes a speedup the same way.
package stats
