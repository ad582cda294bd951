// Package partition splits a graph into k parts of nearly equal size with
// few edges between them, the way METIS does, in pure Go: no cgo and no
// METIS installation.
//
// KWay is a multilevel k-way partitioner. It coarsens the graph by
// heavy-edge matching (vertices visited in random order, lowest degree
// first) until a few dozen vertices per part remain or coarsening stalls,
// partitions the coarsest graph by recursive multilevel bisection (greedy
// breadth-first growing from several random seeds, Fiduccia-Mattheyses
// refinement, best try kept), and on the way back up projects the
// partition to every finer level and refines it with greedy boundary moves
// (each boundary vertex goes to the neighboring part that gains the most
// cut, if that part has room), rebalancing explicitly where a level breaks
// the tolerance.
//
// The input is taken as undirected: an edge stored in either direction
// counts once, with weight 1; self-loops and duplicate entries are ignored.
// The graphs the dataset loaders return (symmetric, no self-loops, no
// duplicates) therefore partition exactly as METIS would see them, and
// EdgeCut counts cut edges as METIS does (each undirected edge once).
//
// Results are deterministic for a given graph, k and Options.Seed.
package partition
