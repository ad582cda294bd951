package synth

import (
	"math"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// aliasEntry is one slot of a Walker/Vose alias table: slot i yields self
// when the low 32 random bits are below thr, else alias. Storing the
// outcomes (node ids) in the slot makes a draw a single memory access.
type aliasEntry struct {
	thr   uint32
	self  int32
	alias int32
}

// buildAlias fills tab (len n) for the weights w (len n, all >= 0, sum > 0)
// and outcomes ids (len n). small and large are scratch of capacity n.
func buildAlias(tab []aliasEntry, w []float64, ids []int32, small, large []int32) {
	n := len(w)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	p := make([]float64, n) // weights scaled to mean 1
	small, large = small[:0], large[:0]
	for i, x := range w {
		p[i] = x * float64(n) / sum
		tab[i] = aliasEntry{thr: math.MaxUint32, self: ids[i], alias: ids[i]}
		if p[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		tab[s].thr = uint32(p[s] * (1 << 32))
		tab[s].alias = ids[l]
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Leftovers (rounding) keep probability 1 of their own outcome.
}

// draw picks one outcome of the table.
func draw(tab []aliasEntry, r *rng.Rand) int32 {
	x := r.Uint64()
	return tab[slot(x, len(tab))].pick(uint32(x))
}

// slot maps the high 32 bits of x to a slot of a table of n entries.
func slot(x uint64, n int) int {
	return int((uint64(uint32(x>>32)) * uint64(n)) >> 32)
}

// pick returns the slot's outcome for the random word low (the low 32 bits
// of the draw that chose the slot). Branch-free: the test is random, so a
// branch would be mispredicted half of the time.
func (e *aliasEntry) pick(low uint32) int32 {
	mask := -int32((uint64(low) - uint64(e.thr)) >> 63) // -1 when low < thr
	return e.alias ^ ((e.self ^ e.alias) & mask)
}
