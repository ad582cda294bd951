// Command ptxgen compiles the CUDA C kernels of gnn/device/cuda to PTX with
// nvcc (go generate runs it) and writes, in front of each PTX file, a header
// naming the nvcc release and the SHA-256 of every source the kernel file is
// built from. The package's tests check those checksums against the sources
// in the default build, so committed PTX cannot drift from its .cu files
// unnoticed; with -check, ptxgen regenerates in memory and reports any
// difference from the committed files (CI runs it where nvcc is installed).
//
// Usage (from gnn/device/cuda):
//
//	go run ./internal/ptxgen [-nvcc nvcc] [-arch compute_70] [-check] [-dir kernels]
//
// The committed PTX comes from nvcc 11.8 (Debian's nvidia-cuda-toolkit);
// where it is not installed, scripts/nvcc-local.sh unpacks it without
// installing and prints the nvcc to pass with -nvcc.
package main
