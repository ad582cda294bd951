package memory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Cut rules: the order in which edges are dropped.
const (
	RuleRandom        = "random"         // a seeded random order
	RuleDegreeSum     = "degree-sum"     // largest deg(u)+deg(v) first
	RuleDegreeProduct = "degree-product" // largest deg(u)*deg(v) first
	RuleDegreeCap     = "degree-cap"     // from the longest rows first, their largest-degree neighbors first
)

// Rules lists the cut rules.
var Rules = []string{RuleRandom, RuleDegreeSum, RuleDegreeProduct, RuleDegreeCap}

// CheckRule returns an error naming the valid rules when rule is not one.
func CheckRule(rule string) error {
	if !slices.Contains(Rules, rule) {
		return fmt.Errorf("cut rule %q is not one of %s", rule, strings.Join(Rules, ", "))
	}
	return nil
}

// DropOrder returns blk's edge positions in the order rule drops them.
// src maps the block's local sources to global ids (destinations are its
// first NumDst entries) and deg gives a global node's degree. Self-loops
// (a destination aggregating its own row) come last, after every other
// edge, so that a cut drops them only when nothing else is left. Ties keep
// edge order, so the order depends only on the block, deg, rule and seed.
func DropOrder(blk *graph.Block, src []int32, deg []float32, rule string, seed uint64) ([]int64, error) {
	if err := CheckRule(rule); err != nil {
		return nil, err
	}
	ne := blk.NumEdges()
	order := make([]int64, 0, ne)
	var loops []int64
	for d := 0; d < blk.NumDst; d++ {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if src[blk.Indices[e]] == src[d] {
				loops = append(loops, e)
			} else {
				order = append(order, e)
			}
		}
	}
	if rule == RuleRandom {
		r := rng.New(seed, 0x637574)
		for i := len(order) - 1; i > 0; i-- {
			j := int(r.Uint64() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		return append(order, loops...), nil
	}
	score := make([]float64, ne)
	for d := 0; d < blk.NumDst; d++ {
		du := float64(deg[src[d]])
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			dv := float64(deg[src[blk.Indices[e]]])
			switch rule {
			case RuleDegreeSum:
				score[e] = du + dv
			case RuleDegreeProduct:
				score[e] = du * dv
			default:
				score[e] = dv
			}
		}
	}
	// Ties fall back to edge position: an unstable sort then gives the
	// stable order, several times faster than a stable sort.
	byScore := func(a, b int64) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return cmp.Compare(a, b)
	}
	slices.SortFunc(order, byScore)
	if rule == RuleDegreeCap {
		// Water-filling: an edge's key is its row's length before it is
		// dropped, its row's edges being dropped largest-degree neighbor
		// first; any prefix of the order caps every row at about the
		// same length and leaves the rows under that cap whole.
		key := make([]int64, ne)
		left := make([]int64, blk.NumDst) // edges other than self-loops
		dst := make([]int32, ne)
		for d := 0; d < blk.NumDst; d++ {
			for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
				dst[e] = int32(d)
			}
		}
		for _, e := range order {
			left[dst[e]]++
		}
		for _, e := range order {
			d := dst[e]
			key[e] = left[d]
			left[d]--
		}
		slices.SortFunc(order, func(a, b int64) int {
			if key[a] != key[b] {
				if key[a] > key[b] {
					return -1
				}
				return 1
			}
			return byScore(a, b)
		})
	}
	return append(order, loops...), nil
}

// Cut drops edges of blk in the given order (a permutation of its edge
// positions, e.g. from DropOrder) until fits(numSrc, numEdges) holds for
// what is left, where numSrc counts the destinations plus the other sources
// still referenced by a kept edge. It drops the shortest prefix of order
// that fits, so it keeps the largest number of edges any prefix keeps.
//
// When blk fits as it is, Cut returns it unchanged with keep nil. Otherwise
// it returns a new block over the remaining sources, renumbered with the
// destinations first and the others in their original order, and keep,
// which maps the new local sources to blk's. ok is false when even dropping
// every edge does not fit (out is then the edgeless block).
func Cut(blk *graph.Block, order []int64, fits func(numSrc int, numEdges int64) bool) (out *graph.Block, keep []int32, dropped int64, ok bool) {
	ne := blk.NumEdges()
	if fits(blk.NumSrc, ne) {
		return blk, nil, 0, true
	}
	ref := make([]int32, blk.NumSrc)
	for _, c := range blk.Indices {
		ref[c]++
	}
	nsrc := blk.NumDst
	for c := blk.NumDst; c < blk.NumSrc; c++ {
		if ref[c] > 0 {
			nsrc++
		}
	}
	drop := make([]bool, ne)
	ok = fits(nsrc, ne)
	for _, e := range order {
		if ok {
			break
		}
		drop[e] = true
		dropped++
		if c := blk.Indices[e]; int(c) >= blk.NumDst {
			if ref[c]--; ref[c] == 0 {
				nsrc--
			}
		}
		ok = fits(nsrc, ne-dropped)
	}
	newID := make([]int32, blk.NumSrc)
	keep = make([]int32, 0, nsrc)
	for c := 0; c < blk.NumSrc; c++ {
		if c < blk.NumDst || ref[c] > 0 {
			newID[c] = int32(len(keep))
			keep = append(keep, int32(c))
		}
	}
	out = &graph.Block{NumDst: blk.NumDst, NumSrc: len(keep), Indptr: make([]int64, blk.NumDst+1), Indices: make([]int32, 0, ne-dropped)}
	if blk.Weights != nil {
		out.Weights = make([]float32, 0, ne-dropped)
	}
	for d := 0; d < blk.NumDst; d++ {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if drop[e] {
				continue
			}
			out.Indices = append(out.Indices, newID[blk.Indices[e]])
			if blk.Weights != nil {
				out.Weights = append(out.Weights, blk.Weights[e])
			}
		}
		out.Indptr[d+1] = int64(len(out.Indices))
	}
	return out, keep, dropped, ok
}
