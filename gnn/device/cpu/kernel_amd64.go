package cpu

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// cpuFeatures reports whether the CPU and the OS support AVX2 with FMA3
// and AVX-512F: CPUID feature bits, plus XGETBV saying the OS saves the
// YMM (and opmask/ZMM) register state.
func cpuFeatures() (avx2fma, avx512 bool) {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false, false
	}
	xcr0, _ := xgetbv()
	if xcr0&0x6 != 0x6 { // XMM and YMM state
		return false, false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	avx2fma = ebx7&(1<<5) != 0
	avx512 = avx2fma && ebx7&(1<<16) != 0 && xcr0&0xe0 == 0xe0 // AVX512F; opmask, ZMM0-15 upper, ZMM16-31
	return avx2fma, avx512
}

// kernelAVX2 computes a 6×16 tile with 12 YMM accumulators and FMA,
// adding it to C (set == 0) or storing it there.
//
//go:noescape
func kernelAVX2(kc int, a, b, c *float32, ldc int, set int)

func kernelAVX2Checked(kc int, a, b, c []float32, ldc int, set bool) {
	_ = c[5*ldc+15]
	if kc <= 0 {
		if set {
			clearTile(c, ldc, 6, 16)
		}
		return
	}
	_ = a[6*kc-1]
	_ = b[16*kc-1]
	kernelAVX2(kc, &a[0], &b[0], &c[0], ldc, setFlag(set))
}

// kernelAVX512 computes a 12×32 tile with 24 ZMM accumulators and FMA,
// adding it to C (set == 0) or storing it there.
//
//go:noescape
func kernelAVX512(kc int, a, b, c *float32, ldc int, set int)

func kernelAVX512Checked(kc int, a, b, c []float32, ldc int, set bool) {
	_ = c[11*ldc+31]
	if kc <= 0 {
		if set {
			clearTile(c, ldc, 12, 32)
		}
		return
	}
	_ = a[12*kc-1]
	_ = b[32*kc-1]
	kernelAVX512(kc, &a[0], &b[0], &c[0], ldc, setFlag(set))
}

// kernelAVX512Direct is kernelAVX512 with A read in place: row r of the
// 12×kc block of A starts at a + r*lda floats. With pf not nil it
// prefetches the 12×kc block at pf (rows lda apart) as it goes.
//
//go:noescape
func kernelAVX512Direct(kc int, a *float32, lda int, b, c *float32, ldc int, set int, pf *float32)

func kernelAVX512DirectChecked(kc int, a []float32, lda int, b, c []float32, ldc int, set bool, pf []float32) {
	_ = c[11*ldc+31]
	if kc <= 0 {
		if set {
			clearTile(c, ldc, 12, 32)
		}
		return
	}
	_ = a[11*lda+kc-1]
	_ = b[32*kc-1]
	var next *float32
	if len(pf) >= 11*lda+kc {
		next = &pf[0]
	}
	kernelAVX512Direct(kc, &a[0], lda, &b[0], &c[0], ldc, setFlag(set), next)
}

// setFlag is the kernels' set argument: 1 when C is overwritten, not added to.
func setFlag(set bool) int {
	if set {
		return 1
	}
	return 0
}

func init() {
	avx2fma, avx512 := cpuFeatures()
	if avx2fma {
		availableKernels = append([]microKernel{{name: "avx2fma6x16", mr: 6, nr: 16, fn: kernelAVX2Checked, direct: kernelAVX2DirectChecked}}, availableKernels...)
	}
	if avx512 {
		availableKernels = append([]microKernel{{name: "avx512f12x32", mr: 12, nr: 32, fn: kernelAVX512Checked, direct: kernelAVX512DirectChecked, directPrefetches: true}}, availableKernels...)
	}
}

// prefetchLines asks the CPU to start loading the cache lines of the n > 0
// floats at p (it never faults, whatever p points to).
//
//go:noescape
func prefetchLines(p *float32, n int)

// prefetchLinesL2 is prefetchLines with PREFETCHT1: a hint to load into
// the outer caches. The gemm prefetches the next block of its operands
// this way. Loading them into L1 as well (PREFETCHT0) holds the L1's miss
// buffers for a DRAM round trip, and the micro-kernel's own loads of B
// from L2 then wait for them: 100000x256x64 ran at about 75 GFLOP/s with
// PREFETCHT0 and 80 with PREFETCHT1, 602x100000x256 AᵀB at 66-70 and 73.
//
//go:noescape
func prefetchLinesL2(p *float32, n int)

const hasPrefetch = true

// axpyNextAVX2 sets y[:n] += alpha*x[:n] (fused multiply-add) after
// prefetching the n floats at next. It needs AVX2 and FMA (hasAxpyNext).
//
//go:noescape
func axpyNextAVX2(alpha float32, x, y, next *float32, n int)

// hasAxpyNext reports whether axpyNext runs the assembly routine.
var hasAxpyNext, _ = cpuFeatures()

// axpyNext sets y += alpha*x, prefetching next (a row a later call reads).
func axpyNext(alpha float32, x, y []float32, next *float32) {
	if hasAxpyNext && len(x) > 0 {
		y = y[:len(x)]
		axpyNextAVX2(alpha, &x[0], &y[0], next, len(x))
		return
	}
	axpyVec(alpha, x, y)
}

// kernelAVX2Direct is kernelAVX2 with A read in place: row r of the 6×kc
// block of A starts at a + r*lda floats.
//
//go:noescape
func kernelAVX2Direct(kc int, a *float32, lda int, b, c *float32, ldc int, set int)

// kernelAVX2DirectChecked runs kernelAVX2Direct; it does not prefetch pf
// (the caller prefetches for it).
func kernelAVX2DirectChecked(kc int, a []float32, lda int, b, c []float32, ldc int, set bool, _ []float32) {
	_ = c[5*ldc+15]
	if kc <= 0 {
		if set {
			clearTile(c, ldc, 6, 16)
		}
		return
	}
	_ = a[5*lda+kc-1]
	_ = b[16*kc-1]
	kernelAVX2Direct(kc, &a[0], lda, &b[0], &c[0], ldc, setFlag(set))
}

// gatherRowsAVX2 copies row idx[i] of src to row i of dst for i < n, rows
// cols floats long, prefetching the ends of the row ahead rows further on.
// The indices must be valid and dst n*cols long.
//
//go:noescape
func gatherRowsAVX2(dst, src *float32, idx *int32, n, cols, ahead int)

// hasGatherAsm reports whether gatherRowsAsm runs the assembly routine.
var hasGatherAsm, _ = cpuFeatures()

// gatherRowsAsm copies rows [lo, hi) of a gather (indices already checked)
// in one assembly loop, prefetching ahead rows further on (none if pf is
// false). It reports false, doing nothing, where the CPU lacks AVX2.
func gatherRowsAsm(dst, src []float32, cols int, idx []int32, lo, hi, ahead int, pf bool) bool {
	if !hasGatherAsm {
		return false
	}
	n := hi - lo
	if n <= 0 || cols == 0 {
		return true
	}
	_ = dst[hi*cols-1]
	if !pf {
		ahead = n
	}
	gatherRowsAVX2(&dst[lo*cols], &src[0], &idx[lo], n, cols, ahead)
	return true
}

// packRowsAVX2 copies rows runs of width floats (6, 12, 16 or 32), lds
// apart at src, to dst one after the other. It needs AVX.
//
//go:noescape
func packRowsAVX2(dst, src *float32, lds, rows, width int)

// hasPackAsm reports whether packRows runs the assembly routine.
var hasPackAsm, _ = cpuFeatures()

// packRows copies rows runs of width floats, lds apart in src, to dst one
// after the other (dst[p*width+i] = src[p*lds+i]). It reports false, doing
// nothing, where the CPU lacks AVX2 or width is not 6, 12, 16 or 32.
func packRows(dst, src []float32, lds, rows, width int) bool {
	if !hasPackAsm || (width != 6 && width != 12 && width != 16 && width != 32) {
		return false
	}
	if rows <= 0 {
		return true
	}
	_ = dst[rows*width-1]
	_ = src[(rows-1)*lds+width-1]
	packRowsAVX2(&dst[0], &src[0], lds, rows, width)
	return true
}
