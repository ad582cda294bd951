// Package sample builds the per-layer blocks a model runs on: GraphSAGE
// neighbor sampling with per-layer fanouts for mini-batch training, and
// full-neighborhood blocks for exact layer-wise inference. Every batch is
// deterministic in (seed, epoch, batch index), whatever the number of
// worker goroutines.
package sample
