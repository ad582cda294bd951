package device

// Gemm names the matrix product a CUDA device uses (train.Config.Gemm);
// the CPU device ignores it.
type Gemm string

// The matrix products.
const (
	GemmAuto   Gemm = "auto"   // cuBLAS where it can be loaded, else the backend's own kernel
	GemmCUBLAS Gemm = "cublas" // cuBLAS, required: opening the device fails without it
	GemmOwn    Gemm = "own"    // the backend's own kernel
)

// Gemms lists the matrix products, the default first.
func Gemms() []Gemm { return []Gemm{GemmAuto, GemmCUBLAS, GemmOwn} }
