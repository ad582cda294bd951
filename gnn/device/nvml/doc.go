// Package nvml reads GPU memory and utilization through NVIDIA's management
// library (NVML), for the journal's gpu events and the run_start host
// description. It is part of the default build: github.com/NVIDIA/go-nvml
// opens libnvidia-ml.so.1 with dlopen only when Open is called, so a
// machine without the library or without a GPU driver gets an error saying
// NVML is not available, and nothing fails at startup. A build without cgo
// reports NVML as not available.
package nvml
