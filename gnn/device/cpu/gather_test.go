package cpu

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// gatherIndices returns n indices into rows rows in the given pattern.
func gatherIndices(r *rng.Rand, pattern string, n, rows int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		switch pattern {
		case "random":
			idx[i] = int32(r.Intn(rows))
		case "sequential": // one long run
			idx[i] = int32(i % rows)
		case "runs": // runs of 1 to 9 rows at random places, some touching
			if i > 0 && r.Intn(5) != 0 && int(idx[i-1])+1 < rows {
				idx[i] = idx[i-1] + 1
			} else {
				idx[i] = int32(r.Intn(rows))
			}
		case "repeat": // the same row over and over: no run
			idx[i] = int32(rows / 2)
		}
	}
	return idx
}

// TestGatherPaths checks every path of the gather (scattered rows and runs,
// with and without prefetching, odd row lengths, several threads) against
// a plain loop.
func TestGatherPaths(t *testing.T) {
	r := rng.New(11)
	for _, cols := range []int{1, 3, 37, 64, 100} {
		for _, srcRows := range []int{50, gatherPrefetchFloats/cols + 7} { // small, and large enough to prefetch
			src := make([]float32, srcRows*cols)
			for i := range src {
				src[i] = float32(i)
			}
			for _, pattern := range []string{"random", "sequential", "runs", "repeat"} {
				idx := gatherIndices(r, pattern, 3000, srcRows)
				for _, th := range testThreads {
					d := New(th, 0)
					dst := make([]float32, len(idx)*cols+1)
					dst[len(dst)-1] = -1 // past the end: untouched
					d.gather(dst[:len(idx)*cols], src, cols, idx)
					for i, s := range idx {
						for c := 0; c < cols; c++ {
							if dst[i*cols+c] != src[int(s)*cols+c] {
								t.Fatalf("cols=%d rows=%d %s threads=%d: dst[%d][%d] = %v, want %v",
									cols, srcRows, pattern, th, i, c, dst[i*cols+c], src[int(s)*cols+c])
							}
						}
					}
					if dst[len(dst)-1] != -1 {
						t.Fatalf("cols=%d %s: wrote past the end", cols, pattern)
					}
					d.Close()
				}
				// The portable loops, whichever path this CPU takes.
				for _, pf := range []bool{false, true} {
					for name, f := range map[string]func([]float32, []float32, int, []int32, int, int, bool){"rows": gatherRowsInOrder, "runs": gatherRuns} {
						dst := make([]float32, len(idx)*cols)
						f(dst, src, cols, idx, 0, len(idx), pf && len(src) >= gatherPrefetchFloats)
						for i, s := range idx {
							if !slices.Equal(dst[i*cols:(i+1)*cols], src[int(s)*cols:(int(s)+1)*cols]) {
								t.Fatalf("gather%s cols=%d %s pf=%v: row %d wrong", name, cols, pattern, pf, i)
							}
						}
					}
				}
			}
		}
	}
}

// TestGatherBadIndex checks that an index out of range panics with its
// value, wherever it is and whichever worker checks it.
func TestGatherBadIndex(t *testing.T) {
	const rows, cols = 100, 5
	src := make([]float32, rows*cols)
	for _, bad := range []int32{-1, rows, 1 << 30} {
		for _, at := range []int{0, 777, 2999} {
			idx := make([]int32, 3000)
			for i := range idx {
				idx[i] = int32(i % rows)
			}
			idx[at] = bad
			for _, th := range []int{1, 3} {
				d := New(th, 0)
				dst := make([]float32, len(idx)*cols)
				got := func() (r any) {
					defer func() { r = recover() }()
					d.gather(dst, src, cols, idx)
					return nil
				}()
				if s, _ := got.(string); !strings.Contains(s, fmt.Sprintf("row %d out of range", bad)) {
					t.Fatalf("index %d at %d threads=%d: recovered %v", bad, at, th, got)
				}
				d.Close()
			}
		}
	}
}

// gatherRowsInOrder is gatherRows to dst's rows in order.
func gatherRowsInOrder(dst, src []float32, cols int, idx []int32, lo, hi int, pf bool) {
	gatherRows(dst, src, cols, idx, nil, lo, hi, pf)
}

// TestGatherRowsTo: GatherRows and GatherHostRows write source row idx[i]
// to row pos[i] and nothing else, from a source small and large enough
// to prefetch, on one and two threads; an index out of range panics.
func TestGatherRowsTo(t *testing.T) {
	r := rng.New(7)
	const cols = 5
	for _, srcRows := range []int{50, gatherPrefetchFloats/cols + 3} {
		src := make([]float32, srcRows*cols)
		for i := range src {
			src[i] = float32(i)
		}
		for _, th := range []int{1, 2} {
			d := New(th, 0)
			dst := mustAlloc(t, d, 300, cols)
			for i := range dst.Data {
				dst.Data[i] = -1
			}
			pos := make([]int32, 0, 150)
			idx := make([]int32, 0, 150)
			for p := 0; p < 300; p += 2 { // every other row, in reverse
				pos = append(pos, int32(298-p))
				idx = append(idx, int32(r.Intn(srcRows)))
			}
			d.GatherHostRows(dst, pos, src, idx)
			for i, p := range pos {
				got := dst.Data[int(p)*cols : int(p+1)*cols]
				if !slices.Equal(got, src[int(idx[i])*cols:int(idx[i]+1)*cols]) {
					t.Fatalf("rows=%d threads=%d: row %d = %v", srcRows, th, p, got)
				}
			}
			for p := 1; p < 300; p += 2 {
				if dst.Data[p*cols] != -1 {
					t.Fatalf("rows=%d threads=%d: row %d written", srcRows, th, p)
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Fatal("row out of range accepted")
					}
				}()
				d.GatherHostRows(dst, []int32{0}, src, []int32{int32(srcRows)})
			}()
			d.Close()
		}
	}
}
