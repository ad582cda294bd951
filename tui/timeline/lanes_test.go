package timeline

import "testing"

// TestGridCell checks that every nanosecond of a window maps to the cell
// whose edges hold it, also where the edges do not fall on whole
// multiples of the scale.
func TestGridCell(t *testing.T) {
	for _, tc := range []struct {
		t0, t1 int64
		n      int
	}{{0, 100, 100}, {5, 12, 3}, {1000, 1997, 7}, {-50, 50, 9}, {0, 1, 1}} {
		g := newGrid(tc.t0, tc.t1, tc.n)
		for ts := tc.t0; ts < tc.t1; ts++ {
			c := g.cell(ts)
			if c < 0 || c >= tc.n || ts < g.edges[c] || ts >= g.edges[c+1] {
				t.Fatalf("window [%d,%d) in %d cells: time %d in cell %d, edges %v", tc.t0, tc.t1, tc.n, ts, c, g.edges)
			}
		}
	}
}

// TestStrongest checks which stage slot wins a cell: the one covering the
// most, a nested stage over its parent on a tie, the first slot on other
// ties, none for an empty cell.
func TestStrongest(t *testing.T) {
	for _, tc := range []struct {
		cov     []int64
		nested  []bool
		best    int
		bestCov int64
	}{
		{[]int64{0, 0, 0}, []bool{false, true, false}, -1, 0},
		{[]int64{3, 5, 4}, []bool{false, false, false}, 1, 5},
		{[]int64{5, 5, 0}, []bool{false, true, false}, 1, 5},
		{[]int64{5, 5, 0}, []bool{false, false, false}, 0, 5},
		{[]int64{6, 5, 0}, []bool{false, true, false}, 0, 6},
		{[]int64{0, 2, 2}, []bool{false, true, true}, 1, 2},
	} {
		best, bestCov := strongest(tc.cov, tc.nested)
		if best != tc.best || bestCov != tc.bestCov {
			t.Errorf("strongest(%v, %v) = %d, %d; want %d, %d", tc.cov, tc.nested, best, bestCov, tc.best, tc.bestCov)
		}
	}
}
