// Package whatif estimates what a run's epoch time would have been under
// another schedule, from the run's own recorded spans, and splits a
// session's speedup among the optimizations that made it.
//
// A Builder is fed the events of one run journal, one at a time (Add),
// and keeps per-batch records only: the sampling, transfer (with its
// feature-cache part) and training time of every batch, the trainer's own
// overhead between batches, the evaluation of every epoch, and the host
// the run had (cores, the Go runtime's processors, what its process got
// from the host). Memory is bounded by the number of batches, not events.
//
// A Model replays those records under a Scenario (a stage made free,
// sampler workers with a prefetch depth, evaluation overlapped with the
// next epoch, transfers that move only a cache's misses) with the
// engine's batch dependencies: a batch trains after it was prepared and
// after the previous batch's step, a worker takes the next batch when the
// prefetch queue has room (gnn/train/pipeline.go), and an overlapped
// evaluation starts when its epoch's training ends, after the previous
// one has finished (gnn/train/overlap.go). Everything that runs at once
// shares the host's cores: see hostModel for how contention stretches
// the stages.
//
// Waterfall attributes a total speedup to its parts in log-speedup
// terms, measured where the session ran a part alone and predicted by the
// model where it did not, with the non-additive remainder as the
// interaction term.
package whatif
