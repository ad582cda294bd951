// Package gnn is the root of gnnscope's training engine. The engine is split
// into sub-packages with one job each:
//
//   - graph: CSR graphs and per-layer bipartite blocks
//   - rng: small deterministic random number generators
//   - data: datasets (gnn-benchmark .npz, OGB raw folders, synthetic
//     generator), the binary cache and train/valid/test splits
//   - sample: neighbor sampling and full-neighborhood inference blocks
//   - tensor: float32 row-major tensors
//   - device: the device interface and its exact byte-counting allocator;
//     device/cpu is the pure-Go backend
//   - nn: layers and models with explicit forward and backward passes
//   - train: the training loop
package gnn
