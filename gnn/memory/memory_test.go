package memory

import (
	"math"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

func TestPredictorLinear(t *testing.T) {
	p := NewPredictor(32, 8)
	r := rng.New(1)
	truth := func(s Shape) int64 { return 4096 + 4*int64(100*s.Nodes[0]+64*s.Nodes[1]+7*s.Nodes[2]) }
	if _, ok := p.Predict(Shape{Nodes: []int{1, 1, 1}, Edges: []int64{1, 1}}); ok {
		t.Fatal("predicted before calibration")
	}
	for i := 0; i < 200; i++ {
		n2 := 50 + r.Intn(500)
		n1 := n2 * (5 + r.Intn(10))
		n0 := n1 * (3 + r.Intn(8))
		s := Shape{Nodes: []int{n0, n1, n2}, Edges: []int64{int64(n1 * 10), int64(n2 * 15)}}
		p.Observe(s, truth(s))
	}
	if m := p.MAPE(); !(m < 1e-4) {
		t.Fatalf("MAPE %g on an exactly linear target", m)
	}
	if m := p.Margin(); m > MinMargin+1e-3 {
		t.Fatalf("margin %g", m)
	}
}

func TestSolveSingular(t *testing.T) {
	// Two identical columns: still a usable fit.
	p := NewPredictor(16, 2)
	for i := 1; i <= 10; i++ {
		p.Observe(Shape{Nodes: []int{i, i}}, int64(100*i+5))
	}
	got, ok := p.Predict(Shape{Nodes: []int{20, 20}})
	if !ok || math.Abs(float64(got-2005)) > 2 {
		t.Fatalf("predict %d %v, want 2005", got, ok)
	}
}

// randBlock makes a block with nd destinations and sources [0, ns).
func randBlock(r *rng.Rand, nd, ns, fan int) *graph.Block {
	b := &graph.Block{NumDst: nd, NumSrc: ns, Indptr: make([]int64, nd+1)}
	for d := 0; d < nd; d++ {
		k := r.Intn(fan + 1)
		for i := 0; i < k; i++ {
			b.Indices = append(b.Indices, int32(r.Intn(ns)))
		}
		b.Indptr[d+1] = int64(len(b.Indices))
	}
	return b
}

func referenced(b *graph.Block) int {
	seen := map[int32]bool{}
	for _, c := range b.Indices {
		if int(c) >= b.NumDst {
			seen[c] = true
		}
	}
	return b.NumDst + len(seen)
}

func TestCutKeepsLargestPrefix(t *testing.T) {
	r := rng.New(7)
	for trial := 0; trial < 50; trial++ {
		nd, ns := 5+r.Intn(20), 30+r.Intn(200)
		blk := randBlock(r, nd, ns, 12)
		src := make([]int32, ns)
		deg := make([]float32, ns)
		for i := range src {
			src[i] = int32(i)
			deg[i] = float32(1 + r.Intn(50))
		}
		rule := Rules[trial%len(Rules)]
		order, err := DropOrder(blk, src, deg, rule, uint64(trial))
		if err != nil {
			t.Fatal(err)
		}
		limit := nd + r.Intn(ns-nd)
		cost := func(nsrc int, ne int64) int64 { return int64(nsrc)*10 + ne }
		budget := cost(limit, blk.NumEdges()/2)
		fits := func(nsrc int, ne int64) bool { return cost(nsrc, ne) <= budget }
		out, keep, dropped, ok := Cut(blk, order, fits)
		if err := out.Validate(); err != nil {
			t.Fatal(err)
		}
		if !ok {
			if cost(nd, 0) <= budget {
				t.Fatalf("trial %d: not ok though the edgeless block fits", trial)
			}
			continue
		}
		if keep == nil {
			if !fits(blk.NumSrc, blk.NumEdges()) {
				t.Fatal("unchanged block does not fit")
			}
			continue
		}
		if out.NumEdges() != blk.NumEdges()-dropped || !fits(out.NumSrc, out.NumEdges()) || out.NumSrc != referenced(out) {
			t.Fatalf("trial %d: cut block %d src %d edges does not fit or is not compact", trial, out.NumSrc, out.NumEdges())
		}
		// Keeping one more edge (dropping one fewer, the last of the prefix)
		// does not fit: the prefix is the shortest.
		if dropped > 0 {
			shorter := &graph.Block{NumDst: blk.NumDst, NumSrc: blk.NumSrc, Indptr: make([]int64, nd+1)}
			drop := map[int64]bool{}
			for _, e := range order[:dropped-1] {
				drop[e] = true
			}
			for d := 0; d < nd; d++ {
				for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
					if !drop[e] {
						shorter.Indices = append(shorter.Indices, blk.Indices[e])
					}
				}
				shorter.Indptr[d+1] = int64(len(shorter.Indices))
			}
			if fits(referenced(shorter), shorter.NumEdges()) {
				t.Fatalf("trial %d: dropping %d edges would have fit, dropped %d", trial, dropped-1, dropped)
			}
		}
		// The kept edges are the original ones, mapped through keep.
		for d := 0; d < nd; d++ {
			j := out.Indptr[d]
			for e := blk.Indptr[d]; e < blk.Indptr[d+1] && j < out.Indptr[d+1]; e++ {
				if keep[out.Indices[j]] == blk.Indices[e] {
					j++
				}
			}
			if j != out.Indptr[d+1] {
				t.Fatalf("trial %d: row %d kept edges are not a subsequence of the original", trial, d)
			}
		}
	}
}

func TestDropOrderDegree(t *testing.T) {
	// dst 0 (deg 1) with sources 1 (deg 10), 2 (deg 3), 3 (deg 7).
	blk := &graph.Block{NumDst: 1, NumSrc: 4, Indptr: []int64{0, 3}, Indices: []int32{1, 2, 3}}
	src := []int32{0, 1, 2, 3}
	deg := []float32{1, 10, 3, 7}
	o, _ := DropOrder(blk, src, deg, RuleDegreeSum, 0)
	if o[0] != 0 || o[1] != 2 || o[2] != 1 {
		t.Fatalf("degree-sum order %v", o)
	}
	if _, err := DropOrder(blk, src, deg, "biggest", 0); err == nil {
		t.Fatal("unknown rule accepted")
	}
}

func TestDropOrderSelfLoopsLast(t *testing.T) {
	// dst 0 aggregates 0 (itself), 1 and 2; dst 1 aggregates 1 (itself) and 0.
	blk := &graph.Block{NumDst: 2, NumSrc: 3, Indptr: []int64{0, 3, 5}, Indices: []int32{0, 1, 2, 1, 0}}
	src := []int32{5, 6, 7}
	deg := []float32{0, 0, 0, 0, 0, 100, 100, 1}
	for _, rule := range Rules {
		o, err := DropOrder(blk, src, deg, rule, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(o) != 5 || o[3] != 0 || o[4] != 3 {
			t.Fatalf("%s: order %v, want the self-loops 0 and 3 last", rule, o)
		}
	}
}

// TestDegreeCapWaterFills checks that every prefix of the degree-cap order
// trims only the longest rows: a row that lost an edge is at most one edge
// shorter than the longest kept row, and it lost its largest-degree
// neighbors.
func TestDegreeCapWaterFills(t *testing.T) {
	r := rng.New(11)
	blk := randBlock(r, 40, 300, 30)
	src := make([]int32, blk.NumSrc)
	deg := make([]float32, blk.NumSrc)
	for i := range src {
		src[i] = int32(i)
		deg[i] = float32(1 + r.Intn(100))
	}
	order, err := DropOrder(blk, src, deg, RuleDegreeCap, 0)
	if err != nil {
		t.Fatal(err)
	}
	kept := make([]int64, blk.NumDst) // edges other than self-loops
	for d := range kept {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if blk.Indices[e] != int32(d) {
				kept[d]++
			}
		}
	}
	dst := func(e int64) int {
		d := 0
		for blk.Indptr[d+1] <= e {
			d++
		}
		return d
	}
	lost := make([]bool, blk.NumDst)
	lastDeg := make([]float32, blk.NumDst)
	for d := range lastDeg {
		lastDeg[d] = 1e9
	}
	for i, e := range order {
		d := dst(e)
		if src[blk.Indices[e]] == src[d] {
			break // self-loops come last
		}
		if g := deg[blk.Indices[e]]; g > lastDeg[d] {
			t.Fatalf("step %d: row %d dropped a degree-%g neighbor after a degree-%g one", i, d, g, lastDeg[d])
		} else {
			lastDeg[d] = g
		}
		kept[d]--
		lost[d] = true
		longest := slices.Max(kept)
		for d2, l := range lost {
			if l && kept[d2] < longest-1 {
				t.Fatalf("step %d: row %d cut to %d while a row keeps %d", i, d2, kept[d2], longest)
			}
		}
	}
}
