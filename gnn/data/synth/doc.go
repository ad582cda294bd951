// Package synth generates synthetic node-classification datasets from a
// degree-corrected stochastic block model (DC-SBM).
//
// Every node gets a class (class sizes follow a Zipf law, so some classes are
// much larger than others) and a degree propensity θ drawn from a capped
// Pareto law, which gives the graph a heavy-tailed, power-law degree
// distribution. Undirected edges are drawn independently: the first end by θ,
// the second end by θ either inside the first end's class (with probability
// Config.Homophily) or among the other classes. The edge list is turned into a
// symmetric CSR without self-loops or duplicate entries; the number of draws
// is calibrated beforehand so that the graph has about Config.AvgDegree
// stored entries per node after duplicates are removed. Features are a
// random Gaussian centroid per class plus isotropic Gaussian noise, so the
// features alone predict the class only partly and neighbors (which mostly
// share the class) add the rest: graph models beat feature-only models.
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
