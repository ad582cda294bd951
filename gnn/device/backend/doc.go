// Package backend opens the compute device a run names: "cpu" (the pure-Go
// backend, the default), "cuda" or "cuda:N" (the CUDA backend, only in a
// binary built with the cuda build tag; elsewhere Open says how to build
// one). It also describes the device for run_start and samples the GPU
// into the journal's gpu events (NVML where available, else the driver's
// cuMemGetInfo).
//
// Only backend_cuda.go, built with the cuda tag, imports the CUDA backend:
// the default build never links gorgonia.org/cu, whose package init exits
// on machines without a GPU (TestDefaultBuildHasNoCUDA checks it).
package backend
