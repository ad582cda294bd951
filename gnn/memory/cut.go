package memory

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/internal/enum"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Rule names the order in which a cut drops edges.
type Rule string

// The cut rules.
const (
	RuleRandom        Rule = "random"         // a seeded random order
	RuleDegreeSum     Rule = "degree-sum"     // largest deg(u)+deg(v) first
	RuleDegreeProduct Rule = "degree-product" // largest deg(u)*deg(v) first
	RuleDegreeCap     Rule = "degree-cap"     // from the longest rows first, their largest-degree neighbors first
)

// Rules lists the cut rules.
func Rules() []Rule { return []Rule{RuleRandom, RuleDegreeSum, RuleDegreeProduct, RuleDegreeCap} }

// CheckRule returns an error naming the valid rules when rule is not one.
func CheckRule(rule Rule) error {
	if !slices.Contains(Rules(), rule) {
		return fmt.Errorf("cut rule %q is not one of %s", rule, enum.Join(Rules(), ", "))
	}
	return nil
}

// DropOrder returns blk's edge positions in the order rule drops them.
// src maps the block's local sources to global ids (destinations are its
// first NumDst entries) and deg gives a global node's degree. Self-loops
// (a destination aggregating its own row) come last, after every other
// edge, so that a cut drops them only when nothing else is left. Ties keep
// edge order, so the order depends only on the block, deg, rule and seed.
// It is Order{Rule: rule, Seed: seed}.Prefix with every edge.
func DropOrder(blk *graph.Block, src []int32, deg []float32, rule Rule, seed uint64) ([]int64, error) {
	return Order{Rule: rule, Seed: seed}.Prefix(blk, src, deg, blk.NumEdges())
}

// Order is the order in which a cut drops a block's edges (see DropOrder).
type Order struct {
	Rule Rule   // one of Rules
	Seed uint64 // the random rule's seed
	// MinKeep protects the last MinKeep edges of every row (other than
	// self-loops, in the rule's order within the row): they come after
	// every unprotected edge, so that any prefix short of the unprotected
	// edges leaves every destination at least MinKeep neighbors (or all it
	// had). 0 protects nothing.
	MinKeep int
}

// Prefix returns the first n positions of the drop order of blk's edges
// (all of them when n is at least the number of edges): the same positions
// in the same order as a full ordering gives, found by partial selection in
// O(E + n log n) comparisons for the degree rules (degree-cap and MinKeep
// add a sort of each row), so that a cut needing a few edges does not sort
// them all. src and deg are as for DropOrder.
func (o Order) Prefix(blk *graph.Block, src []int32, deg []float32, n int64) ([]int64, error) {
	if err := CheckRule(o.Rule); err != nil {
		return nil, err
	}
	if o.MinKeep < 0 {
		return nil, fmt.Errorf("cut order: negative MinKeep %d", o.MinKeep)
	}
	n = max(0, min(n, blk.NumEdges()))
	order, loops := splitLoops(blk, src)
	if o.Rule == RuleRandom {
		shuffle(order, o.Seed)
		if o.MinKeep > 0 {
			order = protectLast(blk, order, o.MinKeep)
		}
		return withLoops(order, loops, n), nil
	}
	score := edgeScores(blk, src, deg, o.Rule)
	byScore := scoreOrder(score)
	less := byScore
	if o.Rule == RuleDegreeCap || o.MinKeep > 0 {
		less = o.rowRankOrder(blk, src, byScore)
	}
	switch {
	case n >= int64(len(order)):
		slices.SortFunc(order, less)
	case o.Rule != RuleDegreeCap && o.MinKeep == 0:
		order = topByScore(order, score, int(n))
	default:
		selectFunc(order, int(n), less)
		order = order[:n]
		slices.SortFunc(order, less)
	}
	return withLoops(order, loops, n), nil
}

// splitLoops returns blk's edge positions in edge order, the self-loops (a
// destination aggregating its own row) apart from the others.
func splitLoops(blk *graph.Block, src []int32) (order, loops []int64) {
	order = make([]int64, 0, blk.NumEdges())
	for d := 0; d < blk.NumDst; d++ {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if src[blk.Indices[e]] == src[d] {
				loops = append(loops, e)
			} else {
				order = append(order, e)
			}
		}
	}
	return order, loops
}

// withLoops appends the self-loops to order and clips it to n positions.
func withLoops(order, loops []int64, n int64) []int64 {
	if n <= int64(len(order)) {
		return order[:n:n]
	}
	return append(order, loops[:n-int64(len(order))]...)
}

// shuffle permutes order in place, seeded by seed (the random rule).
func shuffle(order []int64, seed uint64) {
	r := rng.New(seed, 0x637574)
	for i := len(order) - 1; i > 0; i-- {
		j := int(r.Uint64() % uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
}

// edgeScores returns the score of each of blk's edges under a degree rule:
// deg(u)+deg(v), deg(u)*deg(v) or, for degree-cap, the source's degree.
func edgeScores(blk *graph.Block, src []int32, deg []float32, rule Rule) []float64 {
	score := make([]float64, blk.NumEdges())
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
	return score
}

// scoreOrder compares edge positions by descending score. Ties fall back
// to edge position: every comparison built on it is a strict total order,
// so selection and an unstable sort give one order.
func scoreOrder(score []float64) func(a, b int64) int {
	return func(a, b int64) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return cmp.Compare(a, b)
	}
}

// rowRankOrder ranks every edge within its row by byScore (0 = dropped
// first) and returns the comparison that the degree-cap rule and MinKeep
// use. Degree-cap water-fills: an edge's key is its row's length before it
// is dropped, so any prefix of the order caps every row at about the same
// length and leaves the rows under that cap whole. MinKeep moves each row's
// last MinKeep edges behind all others.
func (o Order) rowRankOrder(blk *graph.Block, src []int32, byScore func(a, b int64) int) func(a, b int64) int {
	key := make([]int64, blk.NumEdges())
	var row []int64
	for d := 0; d < blk.NumDst; d++ {
		row = row[:0]
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			if src[blk.Indices[e]] != src[d] {
				row = append(row, e)
			}
		}
		slices.SortFunc(row, byScore)
		for i, e := range row {
			key[e] = int64(len(row) - i) // edges left in the row, e included
		}
	}
	capRule, keepN := o.Rule == RuleDegreeCap, int64(o.MinKeep)
	return func(a, b int64) int {
		if pa, pb := key[a] <= keepN, key[b] <= keepN; pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		if capRule && key[a] != key[b] {
			if key[a] > key[b] {
				return -1
			}
			return 1
		}
		return byScore(a, b)
	}
}

// protectLast moves the last k edges of every row in order (a permutation
// of non-loop edge positions) behind all the others, keeping the relative
// order within both groups.
func protectLast(blk *graph.Block, order []int64, k int) []int64 {
	dst := make([]int32, blk.NumEdges())
	for d := 0; d < blk.NumDst; d++ {
		for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
			dst[e] = int32(d)
		}
	}
	seen := make([]int32, blk.NumDst)
	prot := make([]bool, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		d := dst[order[i]]
		if int(seen[d]) < k {
			prot[i] = true
		}
		seen[d]++
	}
	out := make([]int64, 0, len(order))
	for i, e := range order {
		if !prot[i] {
			out = append(out, e)
		}
	}
	for i, e := range order {
		if prot[i] {
			out = append(out, e)
		}
	}
	return out
}

// topByScore returns, in order, the n edges of order (positions in
// increasing order) that come first by score, descending, ties by position:
// the n-th largest score is found by selection on a copy of the scores, the
// edges above it and the first ties at it are collected, then sorted by
// (score, position) held side by side.
func topByScore(order []int64, score []float64, n int) []int64 {
	if n == 0 {
		return order[:0]
	}
	v := make([]float64, len(order))
	for i, e := range order {
		v[i] = score[e]
	}
	thr := kthLargest(v, n)
	above := 0
	for _, e := range order {
		if score[e] > thr {
			above++
		}
	}
	type scored struct {
		s float64
		e int64
	}
	top := make([]scored, 0, n)
	ties := n - above
	for _, e := range order {
		switch sc := score[e]; {
		case sc > thr:
			top = append(top, scored{sc, e})
		case sc == thr && ties > 0:
			top = append(top, scored{sc, e})
			ties--
		}
	}
	slices.SortFunc(top, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return cmp.Compare(a.e, b.e)
	})
	out := order[:n]
	for i, x := range top {
		out[i] = x.e
	}
	return out
}

// kthLargest returns the k-th largest value of v (1 <= k <= len(v)),
// reordering v: quickselect with Hoare partitioning around a median of
// three.
func kthLargest(v []float64, k int) float64 {
	lo, hi, t := 0, len(v)-1, k-1
	for lo < hi {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		if a < b {
			a, b = b, a
		}
		if b < c {
			b = c
			if a < b {
				b = a
			}
		}
		pivot := b // the median of a, b, c
		i, j := lo, hi
		for i <= j {
			for v[i] > pivot {
				i++
			}
			for v[j] < pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case t <= j:
			hi = j
		case t >= i:
			lo = i
		default:
			return v[t]
		}
	}
	return v[t]
}

// selectFunc reorders s so that s[:k] holds its k smallest elements under
// the strict total order less (in no particular order): quickselect with a
// median-of-three pivot, O(len(s)) comparisons on average.
func selectFunc(s []int64, k int, less func(a, b int64) int) {
	lo, hi := 0, len(s)
	for hi-lo > 12 {
		if k <= lo || k >= hi {
			return
		}
		m := lo + (hi-lo)/2
		// Median of s[lo], s[m], s[hi-1] into s[hi-1] as the pivot.
		if less(s[m], s[lo]) < 0 {
			s[m], s[lo] = s[lo], s[m]
		}
		if less(s[hi-1], s[lo]) < 0 {
			s[hi-1], s[lo] = s[lo], s[hi-1]
		}
		if less(s[m], s[hi-1]) < 0 {
			s[m], s[hi-1] = s[hi-1], s[m]
		}
		pivot := s[hi-1]
		i := lo
		for j := lo; j < hi-1; j++ {
			if less(s[j], pivot) < 0 {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[i], s[hi-1] = s[hi-1], s[i]
		// s[lo:i] < pivot = s[i] < s[i+1:hi]
		switch {
		case k <= i:
			hi = i
		default:
			lo = i + 1
		}
	}
	// Insertion sort of the small rest puts its smallest first.
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && less(s[j], s[j-1]) < 0; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
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
// which maps the new local sources to blk's. order may be just a prefix of
// a drop order (Order.Prefix): ok is false, with out and keep nil, when
// dropping every edge of order does not fit (with a whole order: when even
// the edgeless block does not fit).
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
	if !ok {
		return nil, nil, dropped, false
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
