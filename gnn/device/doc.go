// Package device defines the small interface every compute backend
// implements (allocation, copies, gemm, aggregation over blocks, gather,
// scatter-add, elementwise ops, softmax cross-entropy, Adam) and the
// Allocator that counts live and peak bytes exactly and enforces a budget.
//
// The pure-Go backend is device/cpu (the default build); a CUDA backend lives
// behind the cuda build tag. Models are written against Device only.
package device
