// Package history holds the historical embeddings of GNNAutoScale (GAS,
// Fey et al. 2021) and measures how stale they are.
//
// GAS trains a deep GNN on mini-batches of graph partitions without
// expanding the neighborhood layer after layer: for every hidden layer l it
// keeps a History, an N×dim table of the last embedding h_l(v) computed for
// every node v. A batch runs its in-batch nodes exactly; the 1-hop halo nodes
// outside the batch are not recomputed but pulled from the history of the
// layer below, and after computing layer l for the in-batch nodes the batch
// pushes those rows back. Nodes are permuted so that every partition is a
// contiguous range of rows, so pushes (and in-batch pulls) are contiguous
// copies (PushRange, PullRange); halo pulls are gathers (Pull). Pulled rows
// are constants: no gradient flows through them, which is what bounds GAS's
// memory to one batch plus its halo. The price is staleness: a halo row was
// pushed some optimizer steps ago with older weights. Every row remembers the
// step of its last push, so Staleness reports the exact age distribution of
// the rows a batch pulls (the journal's stale event), and Refresh, which
// replaces the histories with exact layer-wise inference, reports how far
// they had drifted (the hist_err event).
//
// Histories live in host memory; devices read and write them through the
// device.Device interface (GatherHost, CopyFromHost, CopyToHost), so an
// accelerator backend keeps the same API over pinned memory: NewOn puts the
// table in page-locked memory of a device that has it (the CUDA backend),
// whose pulls and pushes then run asynchronously on its history stream.
package history
