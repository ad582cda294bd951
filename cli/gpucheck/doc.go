// Package gpucheck is `gnnscope gpucheck`: the CUDA backend checked
// against the CPU backend, kernel by kernel, and measured.
package gpucheck
