// Package gnn is the root of gnnscope's training engine. The engine is split
// into sub-packages with one job each:
//
//   - graph: CSR graphs and per-layer bipartite blocks
//   - rng: small deterministic random number generators; rng/philox: the
//     Philox4x32-10 generator of the dropout masks, the same on CPU and GPU
//   - data: datasets (gnn-benchmark .npz, OGB raw folders, Planetoid
//     folders, synthetic generator), the binary cache and
//     train/valid/test splits
//   - sample: neighbor sampling and full-neighborhood inference blocks
//   - partition: k-way graph partitioning, METIS-style, in pure Go (the
//     parts of GNNAutoScale's batches)
//   - tensor: float32 row-major tensors
//   - device: the device interface and its exact byte-counting allocator;
//     device/cpu is the pure-Go backend, device/cuda the CUDA one
//   - hostmem: large host matrices outside the Go heap
//   - memory: the memory guard's toolkit: the batch peak predictor, edge
//     cutting by a degree rule, the evaluation's memory gate
//   - history: GNNAutoScale's historical embeddings and their staleness
//   - featcache: the device feature cache (hot feature rows resident on
//     the device under a byte budget)
//   - nn: layers and models with explicit forward and backward passes
//   - train: the training loop
//   - internal/chisq: the chi-square test of the samplers' draws (tests)
package gnn
