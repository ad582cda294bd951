//go:build !amd64

package cpu

// peakLoop has no FMA loop here: the portable micro-kernel has none to
// compare with.
func peakLoop() (loop func(iters int), name string, flopsPerIter int, ok bool) {
	return nil, "", 0, false
}
