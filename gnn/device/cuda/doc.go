// Package cuda is gnnscope's CUDA backend: an implementation of
// device.Device on an NVIDIA GPU through the CUDA driver API, built only
// with the cuda build tag:
//
//	go build -tags cuda .
//
// The driver is loaded at run time by package cudrv when Open is first
// called, so a cuda binary runs anywhere and Open on a machine without a
// GPU returns an error saying what is missing. A driver error in an
// operation without an error result becomes the device's sticky fault
// (Err), returned by the next Alloc and by Close, never a panic. The
// untagged files hold what needs no driver (the embedded kernels, launch
// geometry, the caching allocator's logic, host-clock mapping of device
// timestamps) and are tested in every build; the tagged tests skip without
// a GPU unless $GNNSCOPE_TEST_GPU is set.
//
// Kernels are CUDA C in kernels/*.cu, compiled to PTX for compute_70 by
// go generate (internal/ptxgen, nvcc 11.8) and embedded; the driver JIT-
// compiles the PTX for the GPU at hand (sm_70 to sm_90). The generated
// files record the SHA-256 of their sources, which the tests check, and the
// device loads no toolkit library at run time (no cuBLAS): gemm is a tiled
// shared-memory kernel for all four transpose variants, aggregation a CSR
// SpMM with one warp per destination row.
//
// Memory: tensors come from a caching allocator (as PyTorch's: blocks are
// carved from driver segments, split to fit and merged back when freed;
// wholly free segments return to the driver only when an allocation
// fails or the device closes), and every tensor's bytes are accounted by
// a device.Allocator exactly as on the CPU backend, so budgets, OOM errors and the memory
// guard work unchanged. Internal scratch (index uploads, block CSR copies,
// split-gemm partials) is held outside that accounting and reported
// separately.
//
// Streams: kernels run in order on a compute stream; host-to-device copies
// of features run on a copy stream and historical embeddings move on a
// history stream, each ordered against compute with events. Host buffers
// are staged through pinned memory. With async transfer the copy of batch
// i+1 overlaps the compute of batch i; without, every transfer waits for
// its copy, as a PyG loader without pinned memory does. Work on the
// streams can be timed with CUDA events mapped onto the host clock
// (device.Timeline).
package cuda
