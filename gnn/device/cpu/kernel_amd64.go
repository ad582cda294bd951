package cpu

import "os"

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// hasAVX2FMA reports whether the CPU and the OS support AVX2 and FMA3
// (CPUID feature bits plus the OS saving the YMM state, as XGETBV says).
func hasAVX2FMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0 // AVX2
}

// kernelAVX2 computes a 6×16 tile with 12 YMM accumulators and FMA.
//
//go:noescape
func kernelAVX2(kc int, a, b, c *float32, ldc int)

func kernelAVX2Checked(kc int, a, b, c []float32, ldc int) {
	if kc <= 0 {
		return
	}
	_ = a[6*kc-1]
	_ = b[16*kc-1]
	_ = c[5*ldc+15]
	kernelAVX2(kc, &a[0], &b[0], &c[0], ldc)
}

var avx2Kernel = microKernel{name: "avx2fma6x16", mr: 6, nr: 16, fn: kernelAVX2Checked}

func init() {
	// GNNSCOPE_PUREGO=1 forces the portable kernel (for comparisons).
	if hasAVX2FMA() && os.Getenv("GNNSCOPE_PUREGO") == "" {
		activeKernel = avx2Kernel
	}
}
