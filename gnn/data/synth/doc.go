// Package synth generates synthetic node-classification datasets from a
// degree-corrected stochastic block model (DC-SBM).
//
// Every node gets a class (class sizes follow a Zipf law, so some classes are
// much larger than others) and a degree propensity θ drawn from a capped
// Pareto law, which gives the graph a heavy-tailed, power-law degree
// distribution. Undirected edges are drawn independently: the first end by θ,
// the second end by θ either inside the first end's class (with probability
// about Config.Homophily) or among the other classes. The edge list is
// turned into a symmetric CSR without self-loops or duplicate entries. The
// number of draws and the draw homophily are calibrated beforehand from the
// model (expected number of distinct pairs) so that the graph has about
// Config.AvgDegree stored entries per node and a fraction Config.Homophily
// of them inside classes after duplicates are removed.
//
// Features are a random Gaussian centroid per class plus isotropic Gaussian
// noise, so the features alone predict the class only partly and neighbors
// (which share the class more often than chance) add the rest: graph models
// clearly beat feature-only models. The presets are tuned so that a 2-layer
// GraphSAGE (fanouts 25,10) reaches about 80% test accuracy and the same
// model without edges (an MLP) about 55%, like ogbn-products (79% / 61%).
//
// Generation is deterministic: the same Config and seed give a bit-identical
// Dataset whatever the number of goroutines, because every piece of random
// work draws from its own stream, rng.New(seed, stage, chunk), over chunks of
// a fixed size.
//
// Presets provide ready-made sizes, from synth-tiny (10k nodes) to
// synth-products (the scale of ogbn-products: 2,449,029 nodes and about 61.9M
// stored edges).
package synth
