package synth

import (
	"slices"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// rowChunk is the number of rows per work item when rows are sorted.
const rowChunk = 4096

// buildSymmetric turns undirected edge draws into a symmetric CSR with
// sorted rows, without self-loops or duplicate entries. Rows are split into
// one contiguous range per worker; each worker scans all draws and handles
// the entries of its rows, so no two goroutines write the same memory. Rows
// are sorted at the end, so the result does not depend on the split.
// src and dst are only read.
func buildSymmetric(n int, src, dst []int32, workers int, rep *reporter) *graph.CSR {
	rep.start("csr", 4)
	parts := max(1, min(workers, n))
	bounds := make([]int32, parts+1)
	for p := 0; p <= parts; p++ {
		bounds[p] = int32(int64(n) * int64(p) / int64(parts))
	}

	// 1. Row lengths (with duplicates).
	indptr := make([]int64, n+1)
	parallelFor(parts, parts, func(p int) {
		lo, width := bounds[p], uint32(bounds[p+1]-bounds[p])
		cnt := indptr[1:]
		for i, u := range src {
			v := dst[i]
			if u == v {
				continue
			}
			if uint32(u-lo) < width {
				cnt[u]++
			}
			if uint32(v-lo) < width {
				cnt[v]++
			}
		}
	})
	for v := 0; v < n; v++ {
		indptr[v+1] += indptr[v]
	}
	rep.add(1)

	// 2. Scatter both directions of every edge.
	indices := make([]int32, indptr[n])
	cursor := make([]int64, n)
	copy(cursor, indptr[:n])
	parallelFor(parts, parts, func(p int) {
		lo, width := bounds[p], uint32(bounds[p+1]-bounds[p])
		for i, u := range src {
			v := dst[i]
			if u == v {
				continue
			}
			if uint32(u-lo) < width {
				indices[cursor[u]] = v
				cursor[u]++
			}
			if uint32(v-lo) < width {
				indices[cursor[v]] = u
				cursor[v]++
			}
		}
	})
	rep.add(1)

	// 3. Sort every row and drop repeats in place; cursor[v] becomes the
	// number of distinct entries of row v.
	chunks := (n + rowChunk - 1) / rowChunk
	parallelFor(workers, chunks, func(ch int) {
		for v := ch * rowChunk; v < min((ch+1)*rowChunk, n); v++ {
			row := indices[indptr[v]:indptr[v+1]]
			slices.Sort(row)
			cursor[v] = int64(len(slices.Compact(row)))
		}
	})
	rep.add(1)

	// 4. Compact into an exactly sized array.
	out := &graph.CSR{N: n, Indptr: make([]int64, n+1)}
	for v := 0; v < n; v++ {
		out.Indptr[v+1] = out.Indptr[v] + cursor[v]
	}
	out.Indices = make([]int32, out.Indptr[n])
	parallelFor(workers, chunks, func(ch int) {
		for v := ch * rowChunk; v < min((ch+1)*rowChunk, n); v++ {
			copy(out.Indices[out.Indptr[v]:out.Indptr[v+1]], indices[indptr[v]:])
		}
	})
	rep.finish()
	return out
}
