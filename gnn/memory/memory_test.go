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
		rule := Rules()[trial%len(Rules())]
		order, err := DropOrder(blk, src, deg, rule, uint64(trial))
		if err != nil {
			t.Fatal(err)
		}
		limit := nd + r.Intn(ns-nd)
		cost := func(nsrc int, ne int64) int64 { return int64(nsrc)*10 + ne }
		budget := cost(limit, blk.NumEdges()/2)
		fits := func(nsrc int, ne int64) bool { return cost(nsrc, ne) <= budget }
		out, keep, dropped, ok := Cut(blk, order, fits)
		if !ok {
			if cost(nd, 0) <= budget || out != nil {
				t.Fatalf("trial %d: not ok though the edgeless block fits (or a block returned)", trial)
			}
			continue
		}
		if err := out.Validate(); err != nil {
			t.Fatal(err)
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
	for _, rule := range Rules() {
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

// TestPrefixMatchesFullOrder: Order.Prefix gives exactly the first n
// positions of the full order for every rule, MinKeep and n, and Cut over a
// long enough prefix cuts exactly as over the whole order (a prefix too
// short is reported, not cut).
func TestPrefixMatchesFullOrder(t *testing.T) {
	r := rng.New(5)
	for trial := 0; trial < 40; trial++ {
		nd, ns := 10+r.Intn(40), 60+r.Intn(300)
		blk := randBlock(r, nd, ns, 20)
		// A few self-loops: destination d listing itself.
		for d := 0; d < nd; d += 3 {
			if blk.Indptr[d+1] > blk.Indptr[d] {
				blk.Indices[blk.Indptr[d]] = int32(d)
			}
		}
		src := make([]int32, ns)
		deg := make([]float32, ns)
		for i := range src {
			src[i] = int32(i)
			deg[i] = float32(1 + r.Intn(8)) // many ties
		}
		for _, rule := range Rules() {
			for _, keep := range []int{0, 1, 3} {
				o := Order{Rule: rule, Seed: uint64(trial), MinKeep: keep}
				full, err := o.Prefix(blk, src, deg, blk.NumEdges())
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(full)) != blk.NumEdges() {
					t.Fatalf("%s: order of %d edges for %d", rule, len(full), blk.NumEdges())
				}
				seen := map[int64]bool{}
				for _, e := range full {
					if seen[e] {
						t.Fatalf("%s: edge %d twice", rule, e)
					}
					seen[e] = true
				}
				if keep == 0 {
					old, _ := DropOrder(blk, src, deg, rule, uint64(trial))
					if !slices.Equal(old, full) {
						t.Fatalf("%s: DropOrder and Order.Prefix differ", rule)
					}
				}
				for _, n := range []int64{0, 1, 2, 7, blk.NumEdges() / 3, blk.NumEdges() - 1} {
					p, err := o.Prefix(blk, src, deg, n)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(p, full[:max(n, 0)]) {
						t.Fatalf("%s keep %d: prefix of %d differs from the full order's", rule, keep, n)
					}
				}
				fits := func(budget int64) func(int, int64) bool {
					return func(ns int, ne int64) bool { return int64(ns)*3+ne <= budget }
				}
				b := int64(blk.NumSrc)*2 + blk.NumEdges()/2
				want, wantKeep, wantDropped, wantOK := Cut(blk, full, fits(b))
				got, gotKeep, gotDropped, gotOK := Cut(blk, full[:wantDropped], fits(b))
				if wantOK != gotOK || wantDropped != gotDropped || !slices.Equal(wantKeep, gotKeep) ||
					(want != nil && (got == nil || !slices.Equal(want.Indices, got.Indices))) {
					t.Fatalf("%s: cut over the shortest prefix differs from the cut over the whole order", rule)
				}
				if wantDropped > 0 {
					if _, _, _, ok := Cut(blk, full[:wantDropped-1], fits(b)); ok {
						t.Fatalf("%s: a prefix one edge shorter than the cut fits", rule)
					}
				}
			}
		}
	}
}

// TestMinKeep: any prefix of the order short of the unprotected edges
// leaves every row at least MinKeep neighbors (or all it had).
func TestMinKeep(t *testing.T) {
	r := rng.New(9)
	blk := randBlock(r, 50, 400, 25)
	src := make([]int32, blk.NumSrc)
	deg := make([]float32, blk.NumSrc)
	for i := range src {
		src[i] = int32(i)
		deg[i] = float32(1 + r.Intn(100))
	}
	const k = 4
	// Neighbors other than self-loops per row, and the edges beyond the k
	// each row keeps.
	nbrs := make([]int64, blk.NumDst)
	free := int64(0)
	for d := 0; d < blk.NumDst; d++ {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if blk.Indices[e] != int32(d) {
				nbrs[d]++
			}
		}
		free += max(0, nbrs[d]-k)
	}
	for _, rule := range Rules() {
		order, err := Order{Rule: rule, Seed: 1, MinKeep: k}.Prefix(blk, src, deg, free)
		if err != nil {
			t.Fatal(err)
		}
		left := slices.Clone(nbrs)
		for _, e := range order {
			d := 0
			for blk.Indptr[d+1] <= e {
				d++
			}
			if blk.Indices[e] == int32(d) {
				t.Fatalf("%s: self-loop of row %d dropped", rule, d)
			}
			if left[d]--; left[d] < min(k, nbrs[d]) {
				t.Fatalf("%s: row %d cut below %d neighbors", rule, d, k)
			}
		}
	}
}

// BenchmarkDropOrder compares ordering every edge of a training batch's
// outermost block (1024 targets, fanouts 15,10: about 150k edges) with
// selecting the 2 % a guard's cut typically needs.
func BenchmarkDropOrder(b *testing.B) {
	r := rng.New(3)
	blk := randBlock(r, 15000, 120000, 20)
	src := make([]int32, blk.NumSrc)
	deg := make([]float32, blk.NumSrc)
	for i := range src {
		src[i] = int32(i)
		deg[i] = float32(1 + r.Intn(200))
	}
	for _, rule := range []Rule{RuleDegreeSum, RuleDegreeCap} {
		b.Run(string(rule)+"/full", func(b *testing.B) {
			for b.Loop() {
				if _, err := DropOrder(blk, src, deg, rule, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(rule)+"/prefix2pct", func(b *testing.B) {
			for b.Loop() {
				if _, err := (Order{Rule: rule}).Prefix(blk, src, deg, blk.NumEdges()/50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
