package cpu

import "strings"

//go:noescape
func fmaPeakAVX2(iters int)

//go:noescape
func fmaPeakAVX512(iters int)

// peakLoop returns the FMA loop of the active micro-kernel's instruction
// set, its name and the flops of one iteration; ok is false where the
// kernel is the portable one (no FMA loop to measure).
func peakLoop() (loop func(iters int), name string, flopsPerIter int, ok bool) {
	switch k := kernel().name; {
	case strings.HasPrefix(k, "avx512"):
		return fmaPeakAVX512, "avx512f 24 zmm FMAs", 24 * 32, true
	case strings.HasPrefix(k, "avx2"):
		return fmaPeakAVX2, "avx2fma 12 ymm FMAs", 12 * 16, true
	}
	return nil, "", 0, false
}
