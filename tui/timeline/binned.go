package timeline

import (
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// binnedSpans is how many spans a window may hold before a drawing sums
// the run's bins (runstate.Bins) instead of walking them, where a cell
// is at least 4 bins wide: a frame then costs the rows' bins, not the
// run's spans, at the price of sharing a bin that straddles two cells
// between them by its overlap.
const binnedSpans = 100_000

// binLevel returns the level of the coarsest bins at least 4 of which
// fit in a cell cellW ns wide; false when even level 0's do not.
func binLevel(b *runstate.Bins, cellW int64) (int, bool) {
	if b.Width(0) == 0 {
		return 0, false
	}
	for level := runstate.BinLevels - 1; level >= 0; level-- {
		if cellW >= 4*b.Width(level) {
			return level, true
		}
	}
	return 0, false
}

// coverageBins is coverage from the run's bins.
func (m *Model) coverageBins(r *runstate.Run, rows []row, g *grid, nst, level int, cov []int64) {
	b := r.Spans.Bins()
	bw := b.Width(level)
	pw, t0, t1, edges := g.n, g.t0, g.t1, g.edges
	one := make([]uint16, 1)
	var slots []int
	for i := range rows {
		w := &rows[i]
		if !w.cells() {
			continue
		}
		lanes := w.lanes
		if w.kind == rowLane {
			one[0] = w.lane
			lanes = one
		}
		for _, id := range lanes {
			stages, bc := b.Lane(level, id)
			ns := len(stages)
			if ns == 0 {
				continue
			}
			slots = slots[:0]
			for _, st := range stages {
				slots = append(slots, min(int(st), nst-1))
			}
			base := i * pw * nst
			k0, k1 := max(t0/bw, 0), min((t1-1)/bw, int64(len(bc)/ns-1))
			for k := k0; k <= k1; k++ {
				vals := bc[int(k)*ns : int(k+1)*ns]
				s, e := max(k*bw, t0), min((k+1)*bw, t1)
				c := g.cell(s)
				if e <= edges[c+1] && e-s == bw { // a whole bin in one cell: most
					for j, v := range vals {
						cov[base+c*nst+slots[j]] += v
					}
					continue
				}
				for ; c < pw && edges[c] < e; c++ {
					ov := min(e, edges[c+1]) - max(s, edges[c])
					for j, v := range vals {
						if v == 0 || ov <= 0 {
							continue
						}
						if ov < bw {
							v = int64(float64(v) * float64(ov) / float64(bw))
						}
						cov[base+c*nst+slots[j]] += v
					}
				}
			}
		}
	}
}
