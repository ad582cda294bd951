// Package ogb loads node-property-prediction datasets of the Open Graph
// Benchmark (ogbn-arxiv, ogbn-products, ...) from the raw CSV files of an
// OGB dataset folder, without Python: gzip streams are decompressed once and
// parsed in parallel chunks without per-line allocations.
package ogb
