package partition

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// wgraph is a weighted undirected graph in CSR form: every edge is stored in
// both rows with the same weight, there are no self-loops.
type wgraph struct {
	n      int
	xadj   []int64
	adjncy []int32
	adjwgt []int32
	vwgt   []int32
	tvwgt  int64
}

// fromCSR symmetrizes g (union of both directions, self-loops and
// duplicates dropped) into a wgraph with unit vertex and edge weights.
func fromCSR(g *graph.CSR) (*wgraph, error) {
	if g == nil {
		return nil, fmt.Errorf("partition: nil graph")
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	n := g.N
	deg := make([]int64, n+1)
	for u := 0; u < n; u++ {
		for _, v := range g.Indices[g.Indptr[u]:g.Indptr[u+1]] {
			if int(v) != u {
				deg[u+1]++
				deg[v+1]++
			}
		}
	}
	for i := 0; i < n; i++ {
		deg[i+1] += deg[i]
	}
	tmp := make([]int32, deg[n])
	fill := make([]int64, n)
	copy(fill, deg[:n])
	for u := 0; u < n; u++ {
		for _, v := range g.Indices[g.Indptr[u]:g.Indptr[u+1]] {
			if int(v) != u {
				tmp[fill[u]] = v
				fill[u]++
				tmp[fill[v]] = int32(u)
				fill[v]++
			}
		}
	}
	// Deduplicate each row in place with a marker array.
	mark := make([]int32, n)
	for i := range mark {
		mark[i] = -1
	}
	xadj := make([]int64, n+1)
	var w int64
	for u := 0; u < n; u++ {
		for _, v := range tmp[deg[u]:deg[u+1]] {
			if mark[v] != int32(u) {
				mark[v] = int32(u)
				tmp[w] = v
				w++
			}
		}
		xadj[u+1] = w
	}
	wg := &wgraph{n: n, xadj: xadj, adjncy: tmp[:w:w], adjwgt: make([]int32, w), vwgt: make([]int32, n), tvwgt: int64(n)}
	for i := range wg.adjwgt {
		wg.adjwgt[i] = 1
	}
	for i := range wg.vwgt {
		wg.vwgt[i] = 1
	}
	return wg, nil
}

// cut returns the weight of edges between different parts.
func (g *wgraph) cut(where []int32) int64 {
	var c int64
	for u := 0; u < g.n; u++ {
		pu := where[u]
		for j := g.xadj[u]; j < g.xadj[u+1]; j++ {
			if where[g.adjncy[j]] != pu {
				c += int64(g.adjwgt[j])
			}
		}
	}
	return c / 2
}

// sub extracts the subgraph induced by the vertices with where[v] == side;
// it returns the subgraph and, for each of its vertices, the vertex of g.
func (g *wgraph) sub(where []int32, side int32, local []int32) (*wgraph, []int32) {
	var ids []int32
	for v := 0; v < g.n; v++ {
		if where[v] == side {
			local[v] = int32(len(ids))
			ids = append(ids, int32(v))
		}
	}
	s := &wgraph{n: len(ids), xadj: make([]int64, len(ids)+1), vwgt: make([]int32, len(ids))}
	for i, v := range ids {
		s.vwgt[i] = g.vwgt[v]
		s.tvwgt += int64(g.vwgt[v])
		for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
			u := g.adjncy[j]
			if where[u] == side {
				s.adjncy = append(s.adjncy, local[u])
				s.adjwgt = append(s.adjwgt, g.adjwgt[j])
			}
		}
		s.xadj[i+1] = int64(len(s.adjncy))
	}
	return s, ids
}

// EdgeCut returns the number of undirected edges of g whose ends lie in
// different parts, counted as METIS counts them: an edge stored in one or
// both directions counts once; self-loops and duplicates are ignored.
func EdgeCut(g *graph.CSR, parts []int32) (int64, error) {
	wg, err := fromCSR(g)
	if err != nil {
		return 0, err
	}
	if len(parts) != g.N {
		return 0, fmt.Errorf("partition: %d part ids for %d nodes", len(parts), g.N)
	}
	return wg.cut(parts), nil
}

// Balance returns the size of the largest part divided by the average part
// size n/k (1 is perfect balance). Part ids must lie in [0, k).
func Balance(parts []int32, k int) (float64, error) {
	sizes, err := partSizes(parts, k)
	if err != nil {
		return 0, err
	}
	return balanceOf(sizes, len(parts), k), nil
}

func partSizes(parts []int32, k int) ([]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("partition: %d parts; need at least 1", k)
	}
	sizes := make([]int, k)
	for v, p := range parts {
		if p < 0 || int(p) >= k {
			return nil, fmt.Errorf("partition: node %d has part %d, outside [0, %d)", v, p, k)
		}
		sizes[p]++
	}
	return sizes, nil
}

func balanceOf(sizes []int, n, k int) float64 {
	if n == 0 {
		return 1
	}
	mx := 0
	for _, s := range sizes {
		mx = max(mx, s)
	}
	return float64(mx) * float64(k) / float64(n)
}
