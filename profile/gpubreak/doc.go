// Package gpubreak is the GPU's own breakdown of a run with device-side
// spans: per step (epoch and batch), the time the GPU was idle,
// computing, copying, and copying while computing; the kernels that took
// the most time; and the kernels shorter than the call that launched
// them.
//
// It works on gnnscope events, so imported torch.profiler traces
// (kineto's attrs "kind": kernel, memcpy, memset; "launch_ns": the
// launching runtime call's duration) and the engine's CUDA backend
// (spans on lanes gpu/compute and gpu/copy) give the same figures.
//
// Every figure is a length of a union of intervals: computing is the
// union of the kernels' intervals, copying that of the copies (memcpy,
// memset), both counted once however many streams and devices ran at
// the same time; copying while computing is the length of the
// intersection of the two unions. A step's window runs from the earliest
// start to the latest end of its GPU spans and its train span on lane
// compute; idle is the window less the union of everything the GPU did.
//
// Memory: the GPU spans' intervals are kept per step until Result (16
// bytes a span; Result merges them into their unions), the kernel names
// once each, and the extent of each step's train span (up to 2^20 steps).
//
// This package imports only profile of gnnscope.
package gpubreak
