package sample

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// FullBlock returns the full-neighborhood block of the destination nodes
// dst: row i lists every entry of graph row dst[i], in the graph's order, as
// local source ids. src holds the sources' global ids: dst first, then the
// other neighbors in order of discovery. Layer-wise inference runs it over
// chunks of all nodes (see LayerwiseChunks) and computes a layer's outputs
// for dst from the previous layer's outputs of src.
//
// s is reused scratch space sized for g (NewScratch(g.N)); nil allocates
// one. dst must hold distinct node ids of g; it may be empty.
func FullBlock(g *graph.CSR, dst []int32, s *Scratch) (*graph.Block, []int32, error) {
	if err := checkGraph(g); err != nil {
		return nil, nil, fmt.Errorf("full block: %w", err)
	}
	if s == nil {
		s = NewScratch(g.N)
	} else if s.Len() < g.N {
		return nil, nil, fmt.Errorf("full block: scratch maps %d nodes, graph has %d", s.Len(), g.N)
	}
	s.begin()
	n := int32(g.N)
	var ne int64
	for i, v := range dst {
		if v < 0 || v >= n {
			return nil, nil, fmt.Errorf("full block: destination %d (position %d) out of range [0, %d)", v, i, g.N)
		}
		if l := s.lookup(v); l >= 0 {
			return nil, nil, fmt.Errorf("full block: destination %d listed twice (positions %d and %d)", v, l, i)
		}
		s.add(v)
		ne += g.Indptr[v+1] - g.Indptr[v]
	}
	b := &graph.Block{NumDst: len(dst), Indptr: make([]int64, len(dst)+1), Indices: make([]int32, ne)}
	mark, gen := s.mark, s.gen
	nodes := s.nodes
	e := 0
	for i, v := range dst {
		for _, u := range g.Neighbors(v) {
			m := mark[u]
			if m>>32 != gen {
				m = gen<<32 | uint64(len(nodes))
				mark[u] = m
				nodes = append(nodes, u)
			}
			b.Indices[e] = int32(uint32(m))
			e++
		}
		b.Indptr[i+1] = int64(e)
	}
	s.nodes = nodes
	b.NumSrc = len(nodes)
	return b, append([]int32(nil), nodes...), nil
}
