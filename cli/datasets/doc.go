// Package datasets is `gnnscope datasets`: the synthetic presets listed,
// any dataset's statistics, presets generated ahead of time and datasets
// exported for other trainers.
package datasets
