package cpu

import "fmt"

// gatherAhead is how many rows ahead gather prefetches: random rows of a
// matrix larger than the caches each miss the TLB and DRAM, and waiting for
// them one at a time would leave most of the memory bandwidth idle.
var gatherAhead = 16

// gatherPrefetchFloats is the source size from which gather prefetches.
const gatherPrefetchFloats = 1 << 20

// gather sets row i of dst (rows cols long) to row idx[i] of src. Each
// worker checks its own range of indices before copying it: an index out
// of range panics (other workers may have written their rows by then). A
// range where at least one row in eight continues a run of consecutive
// source rows copies each run at once; the odd run in a random range does
// not send it off the faster row-by-row loop.
func (d *Device) gather(dst, src []float32, cols int, idx []int32) {
	if len(idx) == 0 {
		return
	}
	pf := hasPrefetch && cols > 0 && len(src) >= gatherPrefetchFloats
	d.parallelFor(len(idx), grainRows(4*cols), func(lo, hi int) {
		switch {
		case checkGatherRows(idx[lo:hi], cols, len(src))*8 >= hi-lo:
			gatherRuns(dst, src, cols, idx, lo, hi, pf)
		case gatherRowsAsm(dst, src, cols, idx, lo, hi, gatherAhead, pf):
		default:
			gatherRows(dst, src, cols, idx, nil, lo, hi, pf)
		}
	})
}

// checkGatherRows panics unless every row of idx lies within src, and
// returns how many rows of idx continue a run (follow the row before them).
func checkGatherRows(idx []int32, cols, srcLen int) (runs int) {
	lo, hi := idx[0], idx[0]
	prev := idx[0]
	for _, s := range idx[1:] {
		lo, hi = min(lo, s), max(hi, s)
		if s == prev+1 {
			runs++
		}
		prev = s
	}
	if lo >= 0 && (int(hi)+1)*cols <= srcLen {
		return runs
	}
	for _, s := range idx {
		if s < 0 || (int(s)+1)*cols > srcLen {
			panic(fmt.Sprintf("cpu: gather: row %d out of range (%d rows of %d)", s, srcLen/max(cols, 1), cols))
		}
	}
	return runs
}

// gatherRows copies source rows idx[lo:hi] one at a time, prefetching
// (pf) the source row gatherAhead ahead of the one copied, to dst's rows
// pos[lo:hi] (rows lo to hi where pos is nil). It is the loop for
// scattered rows where gatherRowsAsm has no assembly routine: a test for
// runs in it costs more than it saves there.
func gatherRows(dst, src []float32, cols int, idx, pos []int32, lo, hi int, pf bool) {
	ahead := gatherAhead
	if pf {
		for p := lo; p < min(lo+ahead, hi); p++ {
			prefetchLines(&src[int(idx[p])*cols], cols)
		}
	}
	for i := lo; i < hi; i++ {
		if p := i + ahead; pf && p < hi {
			prefetchLines(&src[int(idx[p])*cols], cols)
		}
		s, p := int(idx[i])*cols, i*cols
		if pos != nil {
			p = int(pos[i]) * cols
		}
		copy(dst[p:p+cols], src[s:s+cols])
	}
}

// gatherRuns copies rows [lo, hi) one run of consecutive source rows at a
// time, prefetching (pf) the first row of the runs ahead.
func gatherRuns(dst, src []float32, cols int, idx []int32, lo, hi int, pf bool) {
	ahead := gatherAhead
	next := lo // first row not yet considered for prefetching
	for i := lo; i < hi; {
		s := int(idx[i])
		j := i + 1
		for j < hi && int(idx[j]) == s+j-i {
			j++
		}
		if pf {
			for end := min(j+ahead, hi); next < end; next++ {
				// A row that continues a run is streamed by the hardware.
				if next == lo || idx[next] != idx[next-1]+1 {
					prefetchLines(&src[int(idx[next])*cols], cols)
				}
			}
		}
		copy(dst[i*cols:j*cols], src[s*cols:(s+j-i)*cols])
		i = j
	}
}
