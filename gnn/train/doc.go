// Package train runs the training loop: full-batch, neighbor-sampled or
// GNNAutoScale (GAS) training of an nn.Model on a data.Dataset,
// evaluation by exact layer-wise inference, and the figures a run reports
// (accuracies at the selected epoch, time per epoch, peak device bytes).
//
// # Structure
//
// Run builds a trainer (trainer.go) and runs it (run.go): setup once
// (the memory guard's calibration, the inference chunks, the schedule),
// then the epochs, then the result's figures. The trainer hands each part
// the dependencies it reads, never itself (a test keeps it so). An epoch's batches come from
// the schedule (schedule.go), picked once from the config:
//
//   - fullBatch: one step per epoch on the whole graph;
//   - sampled: neighbor-sampled mini-batches, sampled, gathered and
//     trained strictly in turn on the training goroutine (the baseline);
//   - pipelined (pipeline.go): the same batches prepared ahead by sampler
//     workers behind a bounded prefetch queue;
//   - gasSchedule (gas.go): groups of graph parts with their halo's
//     embeddings pulled from per-layer histories.
//
// Every schedule trains through the same stepper (step.go: forward, loss,
// backward, optimizer) and asks the same oomPolicy (policy.go) what a
// refused allocation does (abort or skip) and what the memory guard
// (guard.go) tries on a batch predicted not to fit (resample, cut, split).
// batchLoader (batch.go) turns sampled batches into device inputs;
// memState (memstate.go) accounts every batch's peak. Evaluation
// (evaluator, evaluate.go) is layer-wise inference (infer.go,
// infer_chunks.go), in turn or, with
// Config.OverlapEval, on a snapshot of the weights while the next epoch
// trains (overlapEval, overlap.go), which the run always waits for before
// it returns.
//
// # Memory accounting
//
// A training batch's peak is measured exactly, whatever else allocates on
// the device at the same time (sampler workers gathering later batches, an
// overlapped evaluation): the step runs through a device.Scoped view whose
// Scope counts only the step's own tensors. The batch's peak is then
//
//	resident + input + step peak
//
// where resident is the model's parameters, gradients and Adam moments and
// input is the batch's gathered features: the device's peak had the batch
// run alone. An inference chunk's peak is resident plus the largest scope
// peak of the chunk over the layers.
//
// The guard predicts "input + step peak" (the batch's own bytes) from the
// batch's shape and keeps predicted*(1+margin) under the room left on the
// device: budget minus (live - the batch's input). In the baseline
// schedule that room is exactly budget - resident; with sampler workers
// it is budget - resident - the prefetch room (see below).
//
// A device feature cache (Config.CacheBytes; cache.go) is built before
// the guard calibrates and stays live for the whole run: its rows count
// beside resident everywhere above (memState.held), as do the features
// and the GPU sampler's graph kept in device memory: in the recorded
// peaks, the guard's room, the memory gate and evaluation's chunks (but
// not in the evaluated snapshot, which is of the weights). A batch's input
// is as large with the cache as without; the cache only changes where
// its rows come from (hits from the device, misses from host), so the
// predictor and every batch are the same, and so are the numbers trained.
// The plan's first line says what the cache holds.
//
// # The budget plan
//
// Once the guard is calibrated, before anything is recorded, planBudget
// decides how the optimizations that hold memory beside the training
// batch share the budget, from the predicted need and gathered input of
// a few full batches (Options.OnStart hands its decisions to the caller,
// which records them in run_start's adjusted):
//
//   - sampler workers gather batches ahead into a prefetch room of k full
//     batches' inputs, k at most the pipeline's depth and the room at most
//     half of what the budget leaves beside a training batch; a batch
//     whose input does not fit what is free there waits sampled and the
//     trainer gathers it. With k = 0 every batch waits sampled. The guard,
//     the gate and inference count the room as taken whole, so that no
//     decision depends on how full it happens to be;
//   - an overlapped evaluation's chunks are sized beside a training batch
//     and the prefetch room; when that makes inference cut edges that
//     evaluating alone would not, the evaluation is deferred to each
//     epoch's end instead.
//
// # The memory guard
//
// Every decision of the guard is a prediction from a sampled batch's shape
// (nodes and edges per layer), made before its features are gathered: a
// batch that prepare deferred (see deferLoad) costs no gather, and the
// guard's actions draw and weigh candidates without loading them. The
// actions, cheapest first in time: cut drops just enough edges of the
// outermost block (a partial selection of the rule's order), split draws
// the fewest parts predicted to fit, resample re-draws the batch at most
// maxResample times. Whatever the mode, a batch the action cannot fit is
// split: the OOM policy's plan (oomPolicy.guardPlan) is the mode's action,
// then a split.
//
// # Overlapped evaluation under the guard
//
// The evaluation of epoch e runs
// while epoch e+1 trains, on the same device: the room a training batch
// sees when the guard decides says nothing of the inference chunk that
// allocates a moment later, and inference chunks are sized to the budget
// without regard to the training batch. The two consumers therefore share
// the budget through a memory gate (memory.Gate), a first-come-first-served
// semaphore over bytes:
//
//   - the gate's capacity is budget - resident - prefetch room - snapshot
//     (the evaluated copy of the weights, allocated between epochs while nothing else is
//     in flight, and counted as held for the whole run so that the
//     capacity, and with it every guard decision, is the same whatever
//     the timing: the same seed gives the same batches and weights);
//   - the guard keeps each training batch's predicted bytes, with the
//     safety margin, under that capacity, and the schedule acquires them
//     from the gate before it gathers the batch's features (a batch
//     gathered ahead holds its input in the prefetch room, outside the
//     gate, and acquires the rest) and releases them once the step has
//     freed its tensors;
//   - the evaluator sizes its chunks to the capacity left beside a
//     training batch (the budget plan) and acquires each chunk's analytic
//     peak (evalPeak, exact for GCN and GraphSAGE; or the
//     chunk's measured peak in an earlier evaluation, if larger) before
//     the chunk allocates, and again, for a layer that transforms its
//     input first (nn.NodeTransform), before the chunk's rows are
//     transformed.
//
// Grants that fit together run together; when they do not, the later one
// waits (a mem.wait span on its lane) until the earlier one is done. A
// training batch thus waits for at most the one inference chunk granted
// before it, and is never split or cut because an evaluation happens to be
// in flight. Near a tight budget, where a training batch alone takes most
// of the room, training and inference take turns chunk by chunk; with room
// to spare they overlap fully. Each batch's and chunk's own peak is still
// measured by its Scope and recorded as above.
//
// # Device-side timing
//
// On an asynchronous device (the CUDA backend) the
// host-side spans measure when work was queued; the device's event
// timeline (device.Async) adds, on the gpu/compute and gpu/copy lanes,
// when that work actually ran: each training step's kernels (gpu.train)
// and each batch's feature copy (gpu.transfer). On the CPU device nothing
// changes.
package train
