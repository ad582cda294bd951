package ogb

import (
	"slices"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// buildSymmetric builds the symmetric CSR of the undirected graph with the
// given edges: rows sorted, no duplicate entries, no self-loops. It is
// graph.FromEdges + Symmetrize + RemoveSelfLoops in one pass with less
// memory, and sorts rows in parallel. src and dst are not modified.
func buildSymmetric(n int, src, dst []int32, workers int) *graph.CSR {
	indptr := make([]int64, n+1)
	for i, s := range src {
		if d := dst[i]; s != d {
			indptr[s+1]++
			indptr[d+1]++
		}
	}
	for v := 0; v < n; v++ {
		indptr[v+1] += indptr[v]
	}
	indices := make([]int32, indptr[n])
	fill := make([]int64, n)
	copy(fill, indptr[:n])
	for i, s := range src {
		if d := dst[i]; s != d {
			indices[fill[d]] = s
			fill[d]++
			indices[fill[s]] = d
			fill[s]++
		}
	}
	fill = nil
	// Sort and deduplicate every row in place, in parallel over ranges of
	// rows holding about equal numbers of entries; lengths go to newLen.
	newLen := make([]int64, n)
	workers = max(1, workers)
	var wg sync.WaitGroup
	per := indptr[n]/int64(workers) + 1
	lo := 0
	for w := 0; w < workers && lo < n; w++ {
		hi := lo
		for hi < n && (indptr[hi]-indptr[lo] < per || w == workers-1) {
			hi++
		}
		if hi == lo {
			hi = lo + 1
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for v := lo; v < hi; v++ {
				row := indices[indptr[v]:indptr[v+1]]
				slices.Sort(row)
				newLen[v] = int64(len(slices.Compact(row)))
			}
		}(lo, hi)
		lo = hi
	}
	wg.Wait()
	// Compact the rows to the front (new offsets never exceed old ones).
	out := int64(0)
	for v := 0; v < n; v++ {
		start := indptr[v]
		indptr[v] = out
		copy(indices[out:out+newLen[v]], indices[start:start+newLen[v]])
		out += newLen[v]
	}
	indptr[n] = out
	if out < int64(len(indices))*9/10 {
		indices = slices.Clone(indices[:out])
	} else {
		indices = indices[:out:out]
	}
	return &graph.CSR{N: n, Indptr: indptr, Indices: indices}
}
