package cuda

import (
	"cmp"
	"slices"
)

// scatterPlan groups the indices of a ScatterAdd by destination row so that
// one warp owns each destination and adds its source rows in index order:
// destination target[s] receives the source rows perm[segptr[s]:
// segptr[s+1]], in that order. This is the CPU backend's order, without
// atomics.
type scatterPlan struct {
	target []int32
	segptr []int32
	perm   []int32
}

// planScatter groups idx (the destination row of each source row).
func planScatter(idx []int32) scatterPlan {
	n := len(idx)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	sorted := true
	for i := 1; i < n; i++ {
		if idx[i] < idx[i-1] {
			sorted = false
			break
		}
	}
	if !sorted {
		slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(idx[a], idx[b]) })
	}
	p := scatterPlan{perm: perm, segptr: make([]int32, 0, n+1)}
	for k, i := range perm {
		if k == 0 || idx[i] != idx[perm[k-1]] {
			p.target = append(p.target, idx[i])
			p.segptr = append(p.segptr, int32(k))
		}
	}
	p.segptr = append(p.segptr, int32(n))
	return p
}

// lastWins returns the positions of idx to keep so that, when a value
// repeats, only its last occurrence remains (in their original order): the
// rule of a history push with repeated nodes.
func lastWins(idx []int32) []int32 {
	seen := make(map[int32]struct{}, len(idx))
	keep := make([]int32, 0, len(idx))
	for i := len(idx) - 1; i >= 0; i-- {
		if _, dup := seen[idx[i]]; dup {
			continue
		}
		seen[idx[i]] = struct{}{}
		keep = append(keep, int32(i))
	}
	slices.Reverse(keep)
	return keep
}
