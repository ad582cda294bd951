// Package hostmem allocates large host float32 matrices outside the Go
// heap, for the engine's short-lived N-row matrices (the layer outputs of
// a layer-wise evaluation): memory the program frees itself, returned to
// the operating system at once, and not counted by the garbage collector.
//
// A matrix of several GB in the Go heap raises the collector's target by
// GOGC percent of its size, so the garbage allowed to pile up between
// collections grows with it; and once dead, its pages stay resident until
// a collection and the scavenger return them. Mapped and unmapped
// explicitly, a matrix costs its own size and nothing after Free.
package hostmem
