// Package devcheck checks a compute device against a reference one (the CPU
// backend) operation by operation on random inputs, and measures its
// kernels. It works through device.Device only, so it runs on any backend:
// `gnnscope gpucheck` uses it to verify the CUDA backend on a GPU, and its
// own tests run it on the CPU backend.
package devcheck
