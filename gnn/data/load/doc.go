// Package load turns a user's dataset reference (a synthetic preset name, a
// gnn-benchmark .npz file, an OGB dataset folder, a Planetoid folder or a
// .gsd cache file) into a data.Dataset, keeping loaded and generated
// datasets in an on-disk cache so that the second run opens them in a
// fraction of a second. It also computes
// dataset summaries (Stats) for the datasets command.
package load
