package cuda

import (
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// TestPlanScatterOrder checks that every destination gets its source rows
// in index order and every source row exactly once.
func TestPlanScatterOrder(t *testing.T) {
	r := rng.New(7)
	for _, n := range []int{0, 1, 5, 100, 1000} {
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(r.Intn(max(n/3, 1)))
		}
		p := planScatter(idx)
		if len(p.segptr) != len(p.target)+1 || int(p.segptr[len(p.target)]) != n {
			t.Fatalf("n %d: segments %v", n, p.segptr)
		}
		seen := make([]bool, n)
		for s, tg := range p.target {
			if s > 0 && p.target[s-1] >= tg {
				t.Fatalf("targets not increasing")
			}
			prev := int32(-1)
			for _, i := range p.perm[p.segptr[s]:p.segptr[s+1]] {
				if idx[i] != tg || i <= prev || seen[i] {
					t.Fatalf("n %d: segment %d (target %d) holds %d out of order or twice", n, s, tg, i)
				}
				seen[i], prev = true, i
			}
		}
		if slices.Contains(seen, false) {
			t.Fatalf("n %d: a source row is missing", n)
		}
	}
	// Already sorted input keeps the identity permutation.
	p := planScatter([]int32{0, 0, 2, 5})
	if !slices.Equal(p.perm, []int32{0, 1, 2, 3}) || !slices.Equal(p.target, []int32{0, 2, 5}) || !slices.Equal(p.segptr, []int32{0, 2, 3, 4}) {
		t.Fatalf("sorted plan %+v", p)
	}
}

func TestLastWins(t *testing.T) {
	got := lastWins([]int32{4, 1, 4, 2, 1, 9})
	if !slices.Equal(got, []int32{2, 3, 4, 5}) {
		t.Fatalf("lastWins = %v", got)
	}
	if len(lastWins(nil)) != 0 {
		t.Fatal("empty")
	}
}

func TestLRU(t *testing.T) {
	var evicted []string
	c := newLRU[string, int](10, func(k string, _ int) { evicted = append(evicted, k) })
	c.add("a", 1, 4)
	c.add("b", 2, 4)
	if _, ok := c.get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.add("c", 3, 4) // 12 > 10: evict the least recent, b
	if !slices.Equal(evicted, []string{"b"}) {
		t.Fatalf("evicted %v", evicted)
	}
	c.add("a", 9, 2) // replace: the old a is evicted (its memory freed)
	if v, _ := c.get("a"); v != 9 || evicted[1] != "a" {
		t.Fatalf("replace: %d, %v", v, evicted)
	}
	c.add("big", 4, 100) // alone above the limit: kept, the rest evicted
	if n, b := c.size(); n != 1 || b != 100 {
		t.Fatalf("size %d, %d", n, b)
	}
	c.clear()
	if n, b := c.size(); n != 0 || b != 0 || len(evicted) != 5 {
		t.Fatalf("after clear %d %d %v", n, b, evicted)
	}
}
