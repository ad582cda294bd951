// Package kineto reads the Chrome-format traces that torch.profiler
// writes (export_chrome_trace, tensorboard_trace_handler; Kineto's JSON)
// and turns them into gnnscope events.
//
// A trace is read as a stream: Reader walks the top-level object with a
// json.Decoder and decodes traceEvents one element at a time, so memory
// stays bounded by the largest single event and the small per-trace
// index, not by the file (hundreds of MB are fine). Scan makes a first
// pass that collects what the conversion needs to know before it meets
// an event (baseTimeNanoseconds, which newer traces write after the
// events; the ProfilerStep ranges; the kernel launches by correlation
// id; the flow endpoints); Convert makes the second pass and hands out
// profile events one at a time.
//
// The format drifts between versions and both are tolerated: times in
// microseconds as integers or with fractional nanoseconds, relative to
// baseTimeNanoseconds or absolute; pid and tid as numbers or strings;
// missing External id, distributedInfo or deviceProperties. A trace that
// cannot be read gives an error naming the file, the byte offset in the
// (uncompressed) stream and the index of the event.
//
// Lanes: cpu/<tid> (operators, nested as recorded; attrs "depth"),
// annot/<tid> (user_annotation ranges), runtime/<tid> (CUDA runtime and
// driver calls), py/<tid> (Python functions), gpu<d>/s<stream> (kernels,
// memcpy and memset on device d's stream), gpu<d>/annot (GPU-side
// annotations). A launch and what it launched share the attrs "link"
// (the correlation id, else the flow id that ends where the event is);
// an operator and its runtime calls share "ext" (the External id; for a
// runtime call without one, the innermost operator holding it on its
// thread, whose "ext" is then made up, negative, when it has none).
// Every span's attrs carry "kind"
// (KindKernel, KindMemcpy, ...) and, where a name was mapped to a stage,
// "op": the trace's own name.
//
// This package imports only profile of gnnscope.
package kineto
