// Package data defines Dataset, the engine's in-memory form of a
// node-classification dataset, its splits, and the binary cache that reopens
// a loaded or generated dataset quickly. Loaders for public formats live in
// sub-packages (npz, ogb), the synthetic generator in synth, and load.Open
// resolves a user's --data argument to a Dataset.
package data
