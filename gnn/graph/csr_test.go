package graph

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// edgeSet returns the graph's entries as a set of (row, col) pairs with
// multiplicities.
func edgeSet(g *CSR) map[[2]int32]int {
	m := map[[2]int32]int{}
	for v := 0; v < g.N; v++ {
		for _, c := range g.Neighbors(int32(v)) {
			m[[2]int32{int32(v), c}]++
		}
	}
	return m
}

func rowsSortedUnique(t *testing.T, g *CSR) {
	t.Helper()
	for v := 0; v < g.N; v++ {
		row := g.Neighbors(int32(v))
		for i := 1; i < len(row); i++ {
			if row[i] <= row[i-1] {
				t.Fatalf("row %d not strictly increasing: %v", v, row)
			}
		}
	}
}

func randomGraph(n, m int, seed uint64) (*CSR, []int32, []int32) {
	r := rng.New(seed)
	src, dst := make([]int32, m), make([]int32, m)
	for i := range src {
		src[i], dst[i] = int32(r.Intn(n)), int32(r.Intn(n))
	}
	g, err := FromEdges(n, src, dst, false)
	if err != nil {
		panic(err)
	}
	return g, src, dst
}

func TestFromEdges(t *testing.T) {
	// Messages flow src -> dst: row dst lists src.
	src := []int32{0, 2, 1, 2, 0}
	dst := []int32{1, 1, 2, 1, 1}
	g, err := FromEdges(3, src, dst, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Indptr, []int64{0, 0, 4, 5}) || !slices.Equal(g.Indices, []int32{0, 0, 2, 2, 1}) {
		t.Errorf("got %v %v", g.Indptr, g.Indices)
	}
	if g.NumEdges() != 5 || g.Degree(1) != 4 || !slices.Equal(g.Degrees(), []int32{0, 4, 1}) {
		t.Errorf("edges %d, degrees %v", g.NumEdges(), g.Degrees())
	}
	d, err := FromEdges(3, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Indptr, []int64{0, 0, 2, 3}) || !slices.Equal(d.Indices, []int32{0, 2, 1}) {
		t.Errorf("dedup: got %v %v", d.Indptr, d.Indices)
	}
	empty, err := FromEdges(0, nil, nil, true)
	if err != nil || empty.Validate() != nil || empty.NumEdges() != 0 {
		t.Errorf("empty graph: %v %v", err, empty)
	}
	for _, tc := range []struct {
		n        int
		src, dst []int32
		want     string
	}{
		{3, []int32{0}, []int32{1, 2}, "1 sources but 2 destinations"},
		{3, []int32{0, 3}, []int32{1, 1}, "edge 1 (3 -> 1) out of range [0, 3)"},
		{3, []int32{-1}, []int32{1}, "out of range"},
		{3, []int32{0}, []int32{-1}, "out of range"},
		{-2, nil, nil, "negative node count"},
		{math.MaxInt32 + 10, nil, nil, "too many nodes"},
	} {
		if _, err := FromEdges(tc.n, tc.src, tc.dst, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromEdges(%d, %v, %v): %v, want %q", tc.n, tc.src, tc.dst, err, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		g    *CSR
		want string
	}{
		{&CSR{N: -1}, "negative node count"},
		{&CSR{N: 2, Indptr: []int64{0, 1}}, "indptr has 2 entries, want N+1 = 3"},
		{&CSR{N: 1, Indptr: []int64{1, 1}, Indices: []int32{0}}, "indptr[0] = 1"},
		{&CSR{N: 2, Indptr: []int64{0, 2, 1}, Indices: []int32{0, 1}}, "not monotone at row 1"},
		{&CSR{N: 2, Indptr: []int64{0, 1, 2}, Indices: []int32{0}}, "1 column indices, indptr says 2"},
		{&CSR{N: 2, Indptr: []int64{0, 1, 2}, Indices: []int32{0, 2}}, "column index 2 at position 1 out of range"},
		{&CSR{N: 2, Indptr: []int64{0, 1, 2}, Indices: []int32{-1, 0}}, "column index -1 at position 0"},
	} {
		if err := tc.g.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.g, err, tc.want)
		}
	}
	if err := (&CSR{N: 0, Indptr: []int64{0}}).Validate(); err != nil {
		t.Errorf("empty graph: %v", err)
	}
}

func TestTranspose(t *testing.T) {
	g, _, _ := randomGraph(50, 300, 1)
	tr := g.Transpose()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[[2]int32]int{}
	for e, k := range edgeSet(g) {
		want[[2]int32{e[1], e[0]}] = k
	}
	if got := edgeSet(tr); !mapsEqual(got, want) {
		t.Error("transpose does not reverse every edge")
	}
	for v := 0; v < tr.N; v++ {
		if !slices.IsSorted(tr.Neighbors(int32(v))) {
			t.Fatalf("transpose row %d unsorted", v)
		}
	}
	if back := tr.Transpose(); !slices.Equal(back.Indptr, g.Indptr) || !slices.Equal(back.Indices, g.Indices) {
		t.Error("transposing twice does not give the (sorted) original")
	}
}

func mapsEqual(a, b map[[2]int32]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestSymmetrize(t *testing.T) {
	g, _, _ := randomGraph(40, 200, 2)
	// Add an unsorted row and a self-loop by hand.
	g.Indices[g.Indptr[3]] = 3
	s := g.Symmetrize()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	rowsSortedUnique(t, s)
	if !s.IsSymmetric() {
		t.Fatal("not symmetric")
	}
	want := map[[2]int32]int{}
	for e := range edgeSet(g) {
		want[e] = 1
		want[[2]int32{e[1], e[0]}] = 1
	}
	if !mapsEqual(edgeSet(s), want) {
		t.Error("symmetrize is not the union of g and its transpose")
	}
	if !slices.Contains(s.Neighbors(3), 3) {
		t.Error("self-loop dropped")
	}
	// Symmetrizing a symmetric graph changes nothing.
	again := s.Symmetrize()
	if !slices.Equal(again.Indptr, s.Indptr) || !slices.Equal(again.Indices, s.Indices) {
		t.Error("symmetrize is not idempotent")
	}
	directed, _ := FromEdges(3, []int32{0}, []int32{1}, false)
	if directed.IsSymmetric() {
		t.Error("a single directed edge reported symmetric")
	}
}

func TestSelfLoops(t *testing.T) {
	g, _, _ := randomGraph(30, 120, 3)
	s := g.Symmetrize()
	with := s.AddSelfLoops()
	if err := with.Validate(); err != nil {
		t.Fatal(err)
	}
	rowsSortedUnique(t, with)
	for v := 0; v < with.N; v++ {
		if !slices.Contains(with.Neighbors(int32(v)), int32(v)) {
			t.Fatalf("row %d has no self-loop", v)
		}
	}
	// Adding twice does not duplicate.
	twice := with.AddSelfLoops()
	if !slices.Equal(twice.Indices, with.Indices) {
		t.Error("AddSelfLoops duplicated existing self-loops")
	}
	without := with.RemoveSelfLoops()
	if err := without.Validate(); err != nil {
		t.Fatal(err)
	}
	for v := 0; v < without.N; v++ {
		if slices.Contains(without.Neighbors(int32(v)), int32(v)) {
			t.Fatalf("row %d still has a self-loop", v)
		}
	}
	ref := s.RemoveSelfLoops()
	if !slices.Equal(without.Indptr, ref.Indptr) || !slices.Equal(without.Indices, ref.Indices) {
		t.Error("add then remove self-loops differs from removing them")
	}
	if with.NumEdges() != ref.NumEdges()+int64(with.N) {
		t.Errorf("%d entries with self-loops, want %d + %d", with.NumEdges(), ref.NumEdges(), with.N)
	}
	// An empty row gets just the self-loop; a row of larger ids gets it first.
	h, _ := FromEdges(3, []int32{2}, []int32{0}, false)
	if hl := h.AddSelfLoops(); !slices.Equal(hl.Indices, []int32{0, 2, 1, 2}) || !slices.Equal(hl.Indptr, []int64{0, 2, 3, 4}) {
		t.Errorf("got %v %v", hl.Indptr, hl.Indices)
	}
}

func TestPermute(t *testing.T) {
	g, _, _ := randomGraph(25, 100, 4)
	perm := rng.New(7).Perm(g.N)
	p, err := g.Permute(perm)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[[2]int32]int{}
	for e, k := range edgeSet(g) {
		want[[2]int32{perm[e[0]], perm[e[1]]}] = k
	}
	if !mapsEqual(edgeSet(p), want) {
		t.Error("permuted edges differ")
	}
	for v := 0; v < p.N; v++ {
		if !slices.IsSorted(p.Neighbors(int32(v))) {
			t.Fatal("permuted rows unsorted")
		}
	}
	if _, err := g.Permute(perm[:3]); err == nil {
		t.Error("short permutation accepted")
	}
	bad := slices.Clone(perm)
	bad[0] = bad[1]
	if _, err := g.Permute(bad); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("repeated entry: %v", err)
	}
	bad[0] = int32(g.N)
	if _, err := g.Permute(bad); err == nil {
		t.Error("out-of-range entry accepted")
	}
}

func TestInducedSubgraph(t *testing.T) {
	g, _, _ := randomGraph(30, 200, 5)
	g = g.Symmetrize()
	nodes := []int32{17, 3, 29, 8, 0, 12}
	sub, err := g.InducedSubgraph(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[[2]int32]int{}
	for i, u := range nodes {
		for j, v := range nodes {
			if slices.Contains(g.Neighbors(u), v) {
				want[[2]int32{int32(i), int32(j)}] = 1
			}
		}
	}
	if !mapsEqual(edgeSet(sub), want) {
		t.Errorf("induced subgraph edges %v, want %v", edgeSet(sub), want)
	}
	rowsSortedUnique(t, sub)
	if _, err := g.InducedSubgraph([]int32{1, 2, 1}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate node: %v", err)
	}
	if _, err := g.InducedSubgraph([]int32{1, 30}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("out-of-range node: %v", err)
	}
	if e, err := g.InducedSubgraph(nil); err != nil || e.N != 0 || e.Validate() != nil {
		t.Errorf("empty node set: %v", err)
	}
}

func TestClone(t *testing.T) {
	g, _, _ := randomGraph(10, 30, 6)
	c := g.Clone()
	c.Indices[0] = (c.Indices[0] + 1) % 10
	c.Indptr[1]++
	if g.Indices[0] == c.Indices[0] || g.Indptr[1] == c.Indptr[1] {
		t.Error("clone shares memory with the original")
	}
}
