// Package nn holds the engine's layers and models. Every layer implements an
// explicit forward pass over a graph.Block and the matching backward pass;
// there is no general autograd. A Model chains layers with ReLU and dropout,
// trains on sampled blocks or the full graph, and runs exact layer-wise
// inference. Parameters are updated by Adam (see Optimizer).
package nn
