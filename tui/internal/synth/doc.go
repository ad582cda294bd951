// Package synth generates synthetic journals for the dashboard's tests
// and benchmarks: a baseline run (sampling, transfer and training in turn
// on the compute lane, evaluation after each epoch) or a pipelined one
// (sampler workers ahead of training, evaluation on its own lane), with
// per-batch memory, metrics and, optionally, history staleness. The
// events have the shape and order the engine writes; their timings are
// drawn from a seeded generator, not measured.
package synth
