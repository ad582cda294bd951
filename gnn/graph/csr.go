package graph

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// CSR is a compressed sparse row adjacency of a graph with N nodes.
// Row v's neighbors are Indices[Indptr[v]:Indptr[v+1]].
type CSR struct {
	N       int
	Indptr  []int64 // len N+1, monotone, Indptr[0] == 0
	Indices []int32 // len Indptr[N], each in [0, N)
}

// NumEdges returns the number of stored (directed) edges.
func (g *CSR) NumEdges() int64 {
	if len(g.Indptr) == 0 {
		return 0
	}
	return g.Indptr[g.N]
}

// Neighbors returns row v's neighbors (a view, not a copy).
func (g *CSR) Neighbors(v int32) []int32 {
	return g.Indices[g.Indptr[v]:g.Indptr[v+1]]
}

// Degree returns the number of entries in row v.
func (g *CSR) Degree(v int32) int { return int(g.Indptr[v+1] - g.Indptr[v]) }

// Degrees returns every row's length.
func (g *CSR) Degrees() []int32 {
	d := make([]int32, g.N)
	for v := 0; v < g.N; v++ {
		d[v] = int32(g.Indptr[v+1] - g.Indptr[v])
	}
	return d
}

// Validate checks the structural invariants: len(Indptr) == N+1, Indptr[0] == 0,
// row pointers monotone, len(Indices) == Indptr[N] and every index in [0, N).
func (g *CSR) Validate() error {
	if g.N < 0 {
		return fmt.Errorf("csr: negative node count %d", g.N)
	}
	if len(g.Indptr) != g.N+1 {
		return fmt.Errorf("csr: indptr has %d entries, want N+1 = %d", len(g.Indptr), g.N+1)
	}
	if g.Indptr[0] != 0 {
		return fmt.Errorf("csr: indptr[0] = %d, want 0", g.Indptr[0])
	}
	for v := 0; v < g.N; v++ {
		if g.Indptr[v+1] < g.Indptr[v] {
			return fmt.Errorf("csr: indptr not monotone at row %d (%d > %d)", v, g.Indptr[v], g.Indptr[v+1])
		}
	}
	if int64(len(g.Indices)) != g.Indptr[g.N] {
		return fmt.Errorf("csr: %d column indices, indptr says %d", len(g.Indices), g.Indptr[g.N])
	}
	n := int32(g.N)
	for i, c := range g.Indices {
		if c < 0 || c >= n {
			return fmt.Errorf("csr: column index %d at position %d out of range [0, %d)", c, i, g.N)
		}
	}
	return nil
}

// FromEdges builds a CSR with n nodes where row dst[i] contains src[i]
// (messages flow src -> dst). Rows are sorted; duplicates are kept unless
// dedup is set. Edges out of range are an error.
func FromEdges(n int, src, dst []int32, dedup bool) (*CSR, error) {
	if len(src) != len(dst) {
		return nil, fmt.Errorf("csr: %d sources but %d destinations", len(src), len(dst))
	}
	if n < 0 {
		return nil, fmt.Errorf("csr: negative node count %d", n)
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("csr: too many nodes (%d) for int32 indices", n)
	}
	nn := int32(n)
	indptr := make([]int64, n+1)
	for i, d := range dst {
		s := src[i]
		if d < 0 || d >= nn || s < 0 || s >= nn {
			return nil, fmt.Errorf("csr: edge %d (%d -> %d) out of range [0, %d)", i, s, d, n)
		}
		indptr[d+1]++
	}
	for v := 0; v < n; v++ {
		indptr[v+1] += indptr[v]
	}
	indices := make([]int32, len(src))
	fill := make([]int64, n)
	copy(fill, indptr[:n])
	for i, d := range dst {
		indices[fill[d]] = src[i]
		fill[d]++
	}
	g := &CSR{N: n, Indptr: indptr, Indices: indices}
	g.sortRows()
	if dedup {
		g = g.dedup()
	}
	return g, nil
}

func (g *CSR) sortRows() {
	for v := 0; v < g.N; v++ {
		row := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
		if !slices.IsSorted(row) {
			slices.Sort(row)
		}
	}
}

// dedup removes repeated entries from sorted rows.
func (g *CSR) dedup() *CSR {
	out := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, 0, len(g.Indices))}
	for v := 0; v < g.N; v++ {
		row := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
		for i, c := range row {
			if i == 0 || c != row[i-1] {
				out.Indices = append(out.Indices, c)
			}
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

// Transpose returns the CSR of the reversed graph.
func (g *CSR) Transpose() *CSR {
	t := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, len(g.Indices))}
	for _, c := range g.Indices {
		t.Indptr[c+1]++
	}
	for v := 0; v < g.N; v++ {
		t.Indptr[v+1] += t.Indptr[v]
	}
	fill := make([]int64, g.N)
	copy(fill, t.Indptr[:g.N])
	for v := 0; v < g.N; v++ {
		for _, c := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
			t.Indices[fill[c]] = int32(v)
			fill[c]++
		}
	}
	return t // rows come out sorted because v increases
}

// Symmetrize returns the union of g and its transpose with sorted rows and no
// duplicate entries. Self-loops present in g are kept once.
func (g *CSR) Symmetrize() *CSR {
	t := g.Transpose()
	g2 := g.Clone()
	g2.sortRows()
	out := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, 0, 2*len(g.Indices))}
	for v := 0; v < g.N; v++ {
		a := g2.Indices[g2.Indptr[v]:g2.Indptr[v+1]]
		b := t.Indices[t.Indptr[v]:t.Indptr[v+1]]
		out.Indices = mergeUnique(out.Indices, a, b)
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

// mergeUnique appends the sorted union of sorted a and b to dst, dropping repeats.
func mergeUnique(dst, a, b []int32) []int32 {
	last := int32(-1)
	push := func(c int32) {
		if c != last {
			dst = append(dst, c)
			last = c
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			push(a[i])
			i++
		} else {
			push(b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		push(a[i])
	}
	for ; j < len(b); j++ {
		push(b[j])
	}
	return dst
}

// IsSymmetric reports whether every edge u->v has its reverse v->u.
func (g *CSR) IsSymmetric() bool {
	for v := 0; v < g.N; v++ {
		for _, u := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
			row := g.Indices[g.Indptr[u]:g.Indptr[u+1]]
			if _, ok := slices.BinarySearch(row, int32(v)); !ok && !slices.Contains(row, int32(v)) {
				return false
			}
		}
	}
	return true
}

// AddSelfLoops returns a copy of g in which every row contains its own node
// exactly once (existing self-loops are not duplicated). Rows stay sorted if
// they were.
func (g *CSR) AddSelfLoops() *CSR {
	out := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, 0, len(g.Indices)+g.N)}
	for v := 0; v < g.N; v++ {
		row := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
		has := slices.Contains(row, int32(v))
		inserted := has
		for _, c := range row {
			if !inserted && c > int32(v) {
				out.Indices = append(out.Indices, int32(v))
				inserted = true
			}
			out.Indices = append(out.Indices, c)
		}
		if !inserted {
			out.Indices = append(out.Indices, int32(v))
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

// RemoveSelfLoops returns a copy of g without entries v->v.
func (g *CSR) RemoveSelfLoops() *CSR {
	out := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, 0, len(g.Indices))}
	for v := 0; v < g.N; v++ {
		for _, c := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
			if c != int32(v) {
				out.Indices = append(out.Indices, c)
			}
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

// Permute relabels nodes: old node v becomes perm[v]. perm must be a
// permutation of [0, N). Rows of the result are sorted.
func (g *CSR) Permute(perm []int32) (*CSR, error) {
	if len(perm) != g.N {
		return nil, fmt.Errorf("permute: permutation has %d entries, graph has %d nodes", len(perm), g.N)
	}
	inv := make([]int32, g.N)
	seen := make([]bool, g.N)
	for old, nw := range perm {
		if nw < 0 || int(nw) >= g.N || seen[nw] {
			return nil, fmt.Errorf("permute: not a permutation (entry %d = %d)", old, nw)
		}
		seen[nw] = true
		inv[nw] = int32(old)
	}
	out := &CSR{N: g.N, Indptr: make([]int64, g.N+1), Indices: make([]int32, len(g.Indices))}
	for nw := 0; nw < g.N; nw++ {
		out.Indptr[nw+1] = out.Indptr[nw] + int64(g.Degree(inv[nw]))
	}
	for nw := 0; nw < g.N; nw++ {
		row := out.Indices[out.Indptr[nw]:out.Indptr[nw+1]]
		for i, c := range g.Neighbors(inv[nw]) {
			row[i] = perm[c]
		}
		slices.Sort(row)
	}
	return out, nil
}

// InducedSubgraph returns the subgraph on nodes (in that order: node nodes[i]
// becomes i) keeping only edges with both ends in the set. Duplicate entries
// in nodes are an error.
func (g *CSR) InducedSubgraph(nodes []int32) (*CSR, error) {
	local := make(map[int32]int32, len(nodes))
	for i, v := range nodes {
		if v < 0 || int(v) >= g.N {
			return nil, fmt.Errorf("induced subgraph: node %d out of range [0, %d)", v, g.N)
		}
		if _, dup := local[v]; dup {
			return nil, fmt.Errorf("induced subgraph: node %d listed twice", v)
		}
		local[v] = int32(i)
	}
	out := &CSR{N: len(nodes), Indptr: make([]int64, len(nodes)+1)}
	for i, v := range nodes {
		for _, c := range g.Neighbors(v) {
			if l, ok := local[c]; ok {
				out.Indices = append(out.Indices, l)
			}
		}
		row := out.Indices[out.Indptr[i]:]
		sort.Slice(row, func(a, b int) bool { return row[a] < row[b] })
		out.Indptr[i+1] = int64(len(out.Indices))
	}
	return out, nil
}

// Clone returns a deep copy.
func (g *CSR) Clone() *CSR {
	return &CSR{N: g.N, Indptr: slices.Clone(g.Indptr), Indices: slices.Clone(g.Indices)}
}
