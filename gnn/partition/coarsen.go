package partition

import (
	"slices"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// level is one graph of the multilevel hierarchy; cmap maps each of its
// vertices to a vertex of the next coarser graph.
type level struct {
	g    *wgraph
	cmap []int32
}

// coarsen builds the hierarchy from g down to about coarsenTo vertices, or
// until a round of matching shrinks the graph by less than 10%. The first
// level is g itself; the last level's cmap is nil.
func coarsen(g *wgraph, coarsenTo int, r *rng.Rand) []level {
	levels := []level{{g: g}}
	maxv := int32(max(1, 1.5*float64(g.tvwgt)/float64(max(coarsenTo, 1))))
	for g.n > coarsenTo {
		cmap, cn := match(g, maxv, r)
		if float64(cn) > 0.9*float64(g.n) {
			break
		}
		cg := contract(g, cmap, cn)
		levels[len(levels)-1].cmap = cmap
		levels = append(levels, level{g: cg})
		g = cg
	}
	return levels
}

// match computes a heavy-edge matching: vertices are visited in random
// order, lower degrees first, and each unmatched vertex is paired with the
// unmatched neighbor joined by the heaviest edge whose combined weight stays
// within maxv. Vertices left alone with a single neighbor may pair with
// another such vertex of the same neighbor (two-hop matching), which keeps
// star-like parts of power-law graphs coarsening. It returns the map to
// coarse vertices and their number.
func match(g *wgraph, maxv int32, r *rng.Rand) ([]int32, int) {
	n := g.n
	order := r.Perm(n)
	deg := func(v int32) int64 { return g.xadj[v+1] - g.xadj[v] }
	slices.SortStableFunc(order, func(a, b int32) int {
		da, db := deg(a), deg(b)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	m := make([]int32, n)
	for i := range m {
		m[i] = -1
	}
	unmatched := 0
	for _, v := range order {
		if m[v] >= 0 {
			continue
		}
		best, bw := int32(-1), int32(-1)
		for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
			u := g.adjncy[j]
			if m[u] < 0 && g.adjwgt[j] > bw && g.vwgt[v]+g.vwgt[u] <= maxv {
				best, bw = u, g.adjwgt[j]
			}
		}
		if best >= 0 {
			m[v], m[best] = best, v
		} else {
			m[v] = v
			unmatched++
		}
	}
	if unmatched > n/10 {
		// Two-hop: pair unmatched vertices that share their heaviest
		// neighbor (leaves of the same hub).
		slot := make(map[int32]int32)
		for _, v := range order {
			if m[v] != v || deg(v) == 0 || deg(v) > 2 {
				continue
			}
			hub, hw := int32(-1), int32(-1)
			for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
				if g.adjwgt[j] > hw {
					hub, hw = g.adjncy[j], g.adjwgt[j]
				}
			}
			if u, ok := slot[hub]; ok && g.vwgt[u]+g.vwgt[v] <= maxv {
				m[u], m[v] = v, u
				delete(slot, hub)
			} else {
				slot[hub] = v
			}
		}
	}
	cmap := make([]int32, n)
	for i := range cmap {
		cmap[i] = -1
	}
	cn := int32(0)
	for v := 0; v < n; v++ {
		if cmap[v] < 0 {
			cmap[v] = cn
			cmap[m[v]] = cn
			cn++
		}
	}
	return cmap, int(cn)
}

// contract builds the coarse graph: vertex weights add up, parallel edges
// merge with their weights added, edges inside a coarse vertex vanish.
func contract(g *wgraph, cmap []int32, cn int) *wgraph {
	// members: the (one or two) fine vertices of each coarse vertex.
	first := make([]int32, cn)
	second := make([]int32, cn)
	for i := range first {
		first[i], second[i] = -1, -1
	}
	for v := 0; v < g.n; v++ {
		c := cmap[v]
		if first[c] < 0 {
			first[c] = int32(v)
		} else {
			second[c] = int32(v)
		}
	}
	cg := &wgraph{n: cn, xadj: make([]int64, cn+1), vwgt: make([]int32, cn), tvwgt: g.tvwgt}
	cg.adjncy = make([]int32, 0, len(g.adjncy)/2)
	cg.adjwgt = make([]int32, 0, len(g.adjncy)/2)
	slot := make([]int32, cn)
	for i := range slot {
		slot[i] = -1
	}
	for c := 0; c < cn; c++ {
		start := len(cg.adjncy)
		for _, v := range [2]int32{first[c], second[c]} {
			if v < 0 {
				continue
			}
			cg.vwgt[c] += g.vwgt[v]
			for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
				cu := cmap[g.adjncy[j]]
				if cu == int32(c) {
					continue
				}
				if s := slot[cu]; s >= 0 {
					cg.adjwgt[s] += g.adjwgt[j]
				} else {
					slot[cu] = int32(len(cg.adjncy))
					cg.adjncy = append(cg.adjncy, cu)
					cg.adjwgt = append(cg.adjwgt, g.adjwgt[j])
				}
			}
		}
		for _, cu := range cg.adjncy[start:] {
			slot[cu] = -1
		}
		cg.xadj[c+1] = int64(len(cg.adjncy))
	}
	return cg
}

// project maps a coarse partition to the finer graph of lv.
func project(lv level, cwhere []int32) []int32 {
	where := make([]int32, lv.g.n)
	for v, c := range lv.cmap {
		where[v] = cwhere[c]
	}
	return where
}
