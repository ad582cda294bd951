package partition

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// undirected builds a symmetric CSR from undirected edges.
func undirected(t *testing.T, n int, edges [][2]int32) *graph.CSR {
	t.Helper()
	var src, dst []int32
	for _, e := range edges {
		src = append(src, e[0], e[1])
		dst = append(dst, e[1], e[0])
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// cliques builds k cliques of size s, clique c on nodes c*s..c*s+s-1, with
// clique c joined to clique c+1 by one edge (a ring when ring is set). The
// planted partition cuts exactly those k-1 (or k) edges.
func cliques(t *testing.T, k, s int, ring bool) (*graph.CSR, int64) {
	var edges [][2]int32
	for c := 0; c < k; c++ {
		for i := 0; i < s; i++ {
			for j := i + 1; j < s; j++ {
				edges = append(edges, [2]int32{int32(c*s + i), int32(c*s + j)})
			}
		}
	}
	joins := k - 1
	if ring {
		joins = k
	}
	for c := 0; c < joins; c++ {
		edges = append(edges, [2]int32{int32(c*s + s - 1), int32(((c + 1) % k) * s)})
	}
	return undirected(t, k*s, edges), int64(joins)
}

func randomGraph(t *testing.T, n, m int, seed uint64) *graph.CSR {
	r := rng.New(seed)
	edges := make([][2]int32, 0, m)
	for len(edges) < m {
		u, v := int32(r.Intn(n)), int32(r.Intn(n))
		if u != v {
			edges = append(edges, [2]int32{u, v})
		}
	}
	return undirected(t, n, edges)
}

// check verifies the result against an independent recount.
func check(t *testing.T, g *graph.CSR, k int, ub float64, res *Result) {
	t.Helper()
	if len(res.Parts) != g.N {
		t.Fatalf("%d part ids for %d nodes", len(res.Parts), g.N)
	}
	sizes := make([]int, k)
	for v, p := range res.Parts {
		if p < 0 || int(p) >= k {
			t.Fatalf("node %d in part %d, outside [0, %d)", v, p, k)
		}
		sizes[p]++
	}
	if !slices.Equal(sizes, res.Sizes) {
		t.Fatalf("sizes %v, recounted %v", res.Sizes, sizes)
	}
	var cut int64
	for u := 0; u < g.N; u++ {
		for _, v := range g.Neighbors(int32(u)) {
			if int(v) > u && res.Parts[u] != res.Parts[v] {
				cut++
			}
		}
	}
	if cut != res.EdgeCut {
		t.Fatalf("edge cut %d, recounted %d", res.EdgeCut, cut)
	}
	avg := float64(g.N) / float64(k)
	limit := max(ub, float64(int(avg+0.999999))/avg)
	if res.Balance > limit+1e-9 {
		t.Fatalf("balance %.4f over tolerance %.4f (sizes %v)", res.Balance, limit, sizes)
	}
	for p, s := range sizes {
		if s == 0 {
			t.Fatalf("part %d is empty", p)
		}
	}
}

func TestEdgeCutAndBalanceByHand(t *testing.T) {
	// A 4-cycle 0-1-2-3-0 plus the chord 0-2.
	g := undirected(t, 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}})
	for _, tc := range []struct {
		parts []int32
		k     int
		cut   int64
		bal   float64
	}{
		{[]int32{0, 0, 0, 0}, 1, 0, 1},
		{[]int32{0, 0, 1, 1}, 2, 3, 1},           // 1-2, 3-0, 0-2
		{[]int32{0, 1, 0, 1}, 2, 4, 1},           // every cycle edge
		{[]int32{0, 0, 0, 1}, 2, 2, 1.5},         // 2-3, 3-0
		{[]int32{0, 1, 2, 2}, 4, 4, 2},           // all but 2-3; part 3 empty
		{[]int32{2, 1, 0, 0}, 3, 4, 2 * 3 / 4.0}, // largest part 2, average 4/3
	} {
		cut, err := EdgeCut(g, tc.parts)
		if err != nil || cut != tc.cut {
			t.Errorf("EdgeCut(%v) = %d, %v; want %d", tc.parts, cut, err, tc.cut)
		}
		bal, err := Balance(tc.parts, tc.k)
		if err != nil || bal != tc.bal {
			t.Errorf("Balance(%v, %d) = %v, %v; want %v", tc.parts, tc.k, bal, err, tc.bal)
		}
	}
	// One direction only, a duplicate and a self-loop: each edge once.
	d := &graph.CSR{N: 3, Indptr: []int64{0, 3, 3, 4}, Indices: []int32{0, 1, 1, 1}}
	if cut, err := EdgeCut(d, []int32{0, 1, 1}); err != nil || cut != 1 {
		t.Errorf("asymmetric EdgeCut = %d, %v; want 1", cut, err)
	}
	if cut, err := EdgeCut(d, []int32{0, 1, 2}); err != nil || cut != 2 {
		t.Errorf("asymmetric EdgeCut = %d, %v; want 2", cut, err)
	}
	if _, err := EdgeCut(g, []int32{0, 1}); err == nil {
		t.Error("EdgeCut with too few part ids: no error")
	}
	if _, err := Balance([]int32{0, 3}, 3); err == nil {
		t.Error("Balance with a part id out of range: no error")
	}
}

func TestPlantedCliques(t *testing.T) {
	for _, tc := range []struct {
		k, s int
		ring bool
	}{{2, 20, false}, {4, 12, true}, {8, 10, true}, {16, 8, false}, {5, 9, true}} {
		g, want := cliques(t, tc.k, tc.s, tc.ring)
		res, err := KWay(g, tc.k, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		check(t, g, tc.k, DefaultImbalance, res)
		if res.EdgeCut != want {
			t.Errorf("%d cliques of %d: cut %d, planted %d", tc.k, tc.s, res.EdgeCut, want)
		}
	}
}

func TestPlantedLarge(t *testing.T) {
	// 32 dense random blocks of 300 nodes, few edges between blocks; the
	// graph coarsens through several levels before partitioning.
	const k, s = 32, 300
	r := rng.New(7)
	var edges [][2]int32
	for c := 0; c < k; c++ {
		for i := 0; i < s*8; i++ {
			u, v := int32(c*s+r.Intn(s)), int32(c*s+r.Intn(s))
			if u != v {
				edges = append(edges, [2]int32{u, v})
			}
		}
	}
	for i := 0; i < k*3; i++ {
		edges = append(edges, [2]int32{int32(r.Intn(k * s)), int32(r.Intn(k * s))})
	}
	g := undirected(t, k*s, edges)
	planted := make([]int32, k*s)
	for v := range planted {
		planted[v] = int32(v / s)
	}
	want, _ := EdgeCut(g, planted)
	res, err := KWay(g, k, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	check(t, g, k, DefaultImbalance, res)
	if res.Levels < 3 {
		t.Errorf("only %d levels", res.Levels)
	}
	if res.EdgeCut > want {
		t.Errorf("cut %d, planted partition cuts %d", res.EdgeCut, want)
	}
}

func TestRandomGraphsBalanced(t *testing.T) {
	for i, tc := range []struct {
		n, m, k int
		ub      float64
	}{
		{500, 2000, 7, 0}, {3000, 15000, 16, 1.05}, {2000, 4000, 3, 1.01}, {1000, 600, 10, 0}, {40, 60, 40, 0},
	} {
		g := randomGraph(t, tc.n, tc.m, uint64(i))
		res, err := KWay(g, tc.k, Options{Seed: 9, Imbalance: tc.ub})
		if err != nil {
			t.Fatal(err)
		}
		ub := tc.ub
		if ub == 0 {
			ub = DefaultImbalance
		}
		check(t, g, tc.k, ub, res)
		// Far better than a random assignment, which cuts about (k-1)/k.
		if tc.m > tc.n && tc.k < tc.n && float64(res.EdgeCut) > 0.9*float64(g.NumEdges()/2)*float64(tc.k-1)/float64(tc.k) {
			t.Errorf("n=%d k=%d: cut %d of %d edges", tc.n, tc.k, res.EdgeCut, g.NumEdges()/2)
		}
	}
}

func TestDeterministicBySeed(t *testing.T) {
	g := randomGraph(t, 2000, 8000, 5)
	a, err := KWay(g, 8, Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KWay(g, 8, Options{Seed: 11})
	if !slices.Equal(a.Parts, b.Parts) {
		t.Fatal("same seed, different partitions")
	}
	c, _ := KWay(g, 8, Options{Seed: 12})
	if slices.Equal(a.Parts, c.Parts) {
		t.Error("different seeds, identical partitions")
	}
}

func TestEdgeCases(t *testing.T) {
	g := randomGraph(t, 50, 100, 1)
	res, err := KWay(g, 1, Options{})
	if err != nil || res.EdgeCut != 0 || res.Balance != 1 {
		t.Fatalf("k=1: %+v, %v", res, err)
	}
	res, err = KWay(g, 50, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, g, 50, 1, res)
	empty := &graph.CSR{N: 0, Indptr: []int64{0}}
	if res, err := KWay(empty, 4, Options{}); err != nil || len(res.Parts) != 0 {
		t.Fatalf("empty graph: %+v, %v", res, err)
	}
	// No edges at all: still balanced.
	iso := &graph.CSR{N: 100, Indptr: make([]int64, 101)}
	res, err = KWay(iso, 6, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, iso, 6, DefaultImbalance, res)
	// Asymmetric input is symmetrized.
	d := &graph.CSR{N: 4, Indptr: []int64{0, 1, 2, 3, 3}, Indices: []int32{1, 2, 3}}
	res, err = KWay(d, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.EdgeCut != 1 {
		t.Errorf("path of 4 in 2 parts: cut %d, want 1", res.EdgeCut)
	}
}

// TestVertexWeights: with vertex weights, parts balance their total
// weight (recounted here) within the tolerance; weighing by degree + 1 on a
// graph with hubs makes the parts' edge volumes even where node counts
// alone leave them uneven.
func TestVertexWeights(t *testing.T) {
	// A random graph plus a few hubs joined to many nodes.
	r := rng.New(3)
	n := 3000
	var edges [][2]int32
	for len(edges) < 6000 {
		u, v := int32(r.Intn(n)), int32(r.Intn(n))
		if u != v {
			edges = append(edges, [2]int32{u, v})
		}
	}
	for h := int32(0); h < 6; h++ {
		for i := 0; i < 400; i++ {
			if v := int32(r.Intn(n)); v != h {
				edges = append(edges, [2]int32{h, v})
			}
		}
	}
	g := undirected(t, n, edges)
	w := make([]int32, n)
	var total int64
	for v := range w {
		w[v] = int32(len(g.Neighbors(int32(v)))) + 1
		total += int64(w[v])
	}
	k, ub := 12, 1.05
	res, err := KWay(g, k, Options{Seed: 1, Imbalance: ub, VertexWeights: w})
	if err != nil {
		t.Fatal(err)
	}
	pw := make([]int64, k)
	for v, p := range res.Parts {
		pw[p] += int64(w[v])
	}
	wb := float64(slices.Max(pw)) * float64(k) / float64(total)
	if math.Abs(wb-res.WeightBalance) > 1e-9 {
		t.Fatalf("weight balance %v, recounted %v", res.WeightBalance, wb)
	}
	// The heaviest vertex (a hub) may exceed an even share on its own.
	limit := max(ub, (float64(total)/float64(k)+float64(slices.Max(w)))/(float64(total)/float64(k)))
	if wb > limit+1e-9 {
		t.Fatalf("weight balance %.4f over %.4f (part weights %v)", wb, limit, pw)
	}
	plain, err := KWay(g, k, Options{Seed: 1, Imbalance: ub})
	if err != nil {
		t.Fatal(err)
	}
	if plain.WeightBalance != plain.Balance {
		t.Fatalf("unweighted: weight balance %v, balance %v", plain.WeightBalance, plain.Balance)
	}
	ppw := make([]int64, k)
	for v, p := range plain.Parts {
		ppw[p] += int64(w[v])
	}
	if pb := float64(slices.Max(ppw)) * float64(k) / float64(total); pb <= wb {
		t.Errorf("node-balanced parts' edge volumes are as even (%.3f) as the degree-weighted ones (%.3f)", pb, wb)
	}
	for _, bad := range [][]int32{make([]int32, n-1), make([]int32, n)} {
		if _, err := KWay(g, k, Options{VertexWeights: bad}); err == nil {
			t.Errorf("%d weights (zeros) accepted", len(bad))
		}
	}
}

func TestErrors(t *testing.T) {
	g := randomGraph(t, 10, 20, 1)
	for _, tc := range []struct {
		g    *graph.CSR
		k    int
		opt  Options
		want string
	}{
		{g, 0, Options{}, "at least 1"},
		{g, -3, Options{}, "at least 1"},
		{g, 11, Options{}, "11 parts for 10 nodes"},
		{g, 2, Options{Imbalance: 0.9}, "imbalance"},
		{nil, 2, Options{}, "nil graph"},
		{&graph.CSR{N: 2, Indptr: []int64{0, 1, 2}, Indices: []int32{1, 5}}, 2, Options{}, "out of range"},
	} {
		_, err := KWay(tc.g, tc.k, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KWay(k=%d, %+v) error %v, want one containing %q", tc.k, tc.opt, err, tc.want)
		}
	}
}

func TestWriteMETISAndParts(t *testing.T) {
	g := undirected(t, 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}})
	var b bytes.Buffer
	if err := WriteMETIS(&b, g); err != nil {
		t.Fatal(err)
	}
	if want := "4 3\n2\n1 3\n2 4\n3\n"; b.String() != want {
		t.Errorf("METIS graph %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := WriteParts(&b, []int32{0, 1, 1, 0}); err != nil {
		t.Fatal(err)
	}
	if want := "0\n1\n1\n0\n"; b.String() != want {
		t.Errorf("parts %q, want %q", b.String(), want)
	}
}

// BenchmarkKWay partitions a random graph of 100k nodes and 1M edges (the
// size of synth-small) into 64 parts.
func BenchmarkKWay(b *testing.B) {
	r := rng.New(1)
	const n, m = 100000, 1000000
	src, dst := make([]int32, 0, 2*m), make([]int32, 0, 2*m)
	for len(src) < 2*m {
		u, v := int32(r.Intn(n)), int32(r.Intn(n))
		if u != v {
			src, dst = append(src, u, v), append(dst, v, u)
		}
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := KWay(g, 64, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
