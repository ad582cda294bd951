// Package cublas finds NVIDIA's cuBLAS at run time and runs its float32
// matrix product (cublasSgemm) for the CUDA backend, built only with the
// cuda tag.
//
// cuBLAS is not linked: it is large, and the machines gnnscope runs on
// usually have it only inside PyTorch's Python wheels, of whatever major
// version those carry. Find tries, in order, the paths the caller names,
// libcublas.so.13, .12 and .11 through the dynamic loader's own search,
// then the nvidia/*/lib folders of the Python installations it finds
// (site-packages and dist-packages under /usr, /usr/local, /opt and the
// active virtual environment). When none loads, the backend keeps its own
// GEMM kernel and says so in run_start.
//
// cuBLAS runs in the CUDA runtime's primary context, the one the backend
// uses, so a Handle must be created with that context current. Products
// are float32 in and out, with cuBLAS's default math (no TF32).
package cublas
