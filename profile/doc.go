// Package profile is gnnscope's event vocabulary (schema v1, JSON Lines), the
// Recorder the engine writes timed stages to, and the aggregations every view
// and export is built on (stage totals, data wait, overlap, efficiency, epoch
// times).
//
// One journal line is one Event. Times are integer nanoseconds from the run's
// start on a monotonic clock; the run_start event carries the wall-clock start.
// AppendEvent encodes an event by hand (no reflection, no allocation) and
// DecodeEvent parses one line; decoding gives back exactly what was encoded,
// zero-valued numbers of the event's type included.
//
// The Recorder is cheap enough to leave on: a span is appended to a
// preallocated buffer under a mutex (no allocation), full buffers go to a
// background goroutine that hands them to a Sink in batches and flushes the
// sink at a fixed interval (200 ms by default). A nil *Recorder is valid and
// records nothing, so instrumented code can call it unconditionally.
//
// The Aggregator consumes events one at a time, so a live tail and a finished
// journal give the same numbers by construction.
//
// This package imports nothing else of gnnscope.
package profile
