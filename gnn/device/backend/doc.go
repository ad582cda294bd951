// Package backend opens the compute device a run names: "cpu" (the pure-Go
// backend, the default), "cuda" or "cuda:N" (the CUDA backend, only in a
// binary built with the cuda build tag; elsewhere Open says how to build
// one). It also describes the device for run_start and samples the GPU
// into the journal's gpu events (NVML where available, else the driver's
// cuMemGetInfo).
//
// Only backend_cuda.go, built with the cuda tag, imports the CUDA backend,
// so the default build needs no cgo (TestDefaultBuildHasNoCUDA checks it).
// The cuda build loads the driver only when a CUDA device is opened (see
// package cudrv), so it too runs on machines without a GPU.
package backend
