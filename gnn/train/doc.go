// Package train runs the training loop: full-batch or mini-batch
// (neighbor-sampled) training of an nn.Model on a data.Dataset, evaluation by
// exact layer-wise inference, and the figures a run reports (accuracies at
// the epoch of best validation accuracy, time per epoch, peak device bytes).
package train
