// Package runstate digests a run's event stream into a compact, columnar
// state the dashboard draws from: spans as parallel arrays of start,
// duration, interned stage and lane ids, epoch and batch; per-batch memory
// points; OOMs (failed allocations) and the memory guard's actions, apart;
// per-layer staleness histograms; metric series; and the
// run_start and run_end facts. A profile.Event is several hundred bytes, so
// nothing keeps events themselves: a million-event run costs a few tens of
// megabytes here.
//
// Run is one run's state and is not safe for concurrent use. Set holds the
// runs of a session behind a mutex and feeds them from sessions.Live (one
// tail per run) or from a sessions.Replay (all runs on one timeline) in
// background goroutines; views lock the Set, read the runs and unlock.
//
// The summary figures come from profile.Aggregator, the same incremental
// aggregation the command line uses, so live and finished numbers agree
// with `gnnscope compare`.
package runstate
