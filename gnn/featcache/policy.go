package featcache

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/internal/enum"
)

// Policy names how the cached rows are picked (train.Config.CachePolicy).
type Policy string

// The policies.
const (
	PolicyDegree    Policy = "degree"    // the highest-degree rows
	PolicyFrequency Policy = "frequency" // the rows a pre-sampling pass touched most
)

// Policies lists the policies, the default first.
func Policies() []Policy { return []Policy{PolicyDegree, PolicyFrequency} }

// CheckPolicy accepts "" (degree) and the Policies.
func CheckPolicy(p Policy) error {
	if p == "" || slices.Contains(Policies(), p) {
		return nil
	}
	return fmt.Errorf("cache policy %q: want %s", p, enum.Or(Policies()))
}

// ByDegree returns g's nodes hottest first by degree (row length), ties
// by node id. A sampler reaches a node through its neighbors' rows, so on
// a symmetric graph its degree is the number of rows it appears in.
func ByDegree(g *graph.CSR) []int32 {
	deg := g.Degrees()
	order := make([]int32, len(deg))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(deg[b], deg[a]) })
	return order
}

// ByCount returns the nodes 0..len(counts)-1 hottest first by count, ties
// by node id: the frequency policy's ranking for a pre-sampling pass's
// counts, and the oracle's for an epoch's true ones.
func ByCount(counts []uint32) []int32 {
	order := make([]int32, len(counts))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(counts[b], counts[a]) })
	return order
}

// Count adds one access to counts for every node of nodes (a batch's
// input rows), saturating.
func Count(counts []uint32, nodes []int32) {
	for _, v := range nodes {
		if counts[v] != ^uint32(0) {
			counts[v]++
		}
	}
}

// Covered returns the share of the accesses counts records that fall on
// the first k nodes of order: the hit rate a cache of those rows would
// have had (0 without accesses).
func Covered(order []int32, k int, counts []uint32) float64 {
	var hit, all uint64
	for _, c := range counts {
		all += uint64(c)
	}
	if all == 0 {
		return 0
	}
	for _, v := range order[:min(k, len(order))] {
		hit += uint64(counts[v])
	}
	return float64(hit) / float64(all)
}
