//go:build !amd64

package cpu

const hasPrefetch = false

func prefetchLines(p *float32, n int) {}

func prefetchLinesL2(p *float32, n int) {}

const hasAxpyNext = false

// axpyNext sets y += alpha*x (next is a prefetch hint, unused here).
func axpyNext(alpha float32, x, y []float32, next *float32) { axpyVec(alpha, x, y) }

// gatherRowsAsm has no assembly routine here.
func gatherRowsAsm(dst, src []float32, cols int, idx []int32, lo, hi, ahead int, pf bool) bool {
	return false
}

const hasPackAsm = false

// packRows has no assembly routine here.
func packRows(dst, src []float32, lds, rows, width int) bool { return false }
