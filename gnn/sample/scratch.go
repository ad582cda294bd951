package sample

import (
	"math/bits"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Scratch is one goroutine's reusable state for building blocks: a dense
// global-to-local id map over all nodes of a graph, cleared in O(1) by a
// generation counter, and growable buffers for node lists, edges and random
// choices. A Scratch is not safe for concurrent use; give each goroutine its
// own. It costs 8 bytes per graph node.
type Scratch struct {
	// mark[v] holds gen<<32 | local id of global node v; the entry is
	// valid only when its high half equals the current generation. One
	// word per node keeps each lookup to a single cache line.
	mark []uint64
	gen  uint64

	nodes  []int32 // global ids in local order (targets first)
	edges  []int32 // local source ids of the blocks being built
	indptr []int64 // row pointers of the blocks being built (each block's own, starting at 0)
	start  []int64 // row starts of a hop's destinations
	deg    []int32 // row lengths of a hop's destinations
	pos    []int64 // positions in the graph's Indices sampled in a hop
	gids   []int32 // sampled entries (global ids) of a hop
	sink   uint64  // sum of touched stamps, so the compiler keeps the loads
	pick   []int32 // positions chosen in the current row
	perm   []int32 // partial Fisher-Yates buffer
	set    []int32 // open-addressing set for Floyd's algorithm with large k
}

// NewScratch returns a Scratch for graphs with up to n nodes.
func NewScratch(n int) *Scratch {
	return &Scratch{mark: make([]uint64, n)}
}

// Len returns the number of graph nodes this Scratch can map.
func (s *Scratch) Len() int { return len(s.mark) }

// begin starts a new, empty global-to-local map.
func (s *Scratch) begin() {
	s.gen++
	if s.gen >= 1<<32 { // wrapped: old stamps could alias the new generation
		clear(s.mark)
		s.gen = 1
	}
	s.nodes = s.nodes[:0]
	s.edges = s.edges[:0]
	s.indptr = s.indptr[:0]
}

// lookup returns v's local id, or -1 when v has none in this generation.
func (s *Scratch) lookup(v int32) int32 {
	m := s.mark[v]
	if m>>32 != s.gen {
		return -1
	}
	return int32(uint32(m))
}

// add gives v the next local id and appends it to the node list; v must not
// be mapped yet.
func (s *Scratch) add(v int32) int32 {
	l := int32(len(s.nodes))
	s.mark[v] = s.gen<<32 | uint64(uint32(l))
	s.nodes = append(s.nodes, v)
	return l
}

// Thresholds of choose's strategies.
const (
	floydLinearMax = 16 // up to this k, Floyd's algorithm checks picks by linear scan
	denseFactor    = 4  // d <= denseFactor*k: partial Fisher-Yates over [0, d)
)

// choose returns k distinct positions drawn uniformly without replacement
// from [0, d), where 0 < k < d <= MaxInt32. The returned slice is s.pick or
// s.perm, valid until the next call.
//
// Small k uses Floyd's algorithm with a linear scan of the picks (k draws,
// k²/2 comparisons at worst); k close to d uses a partial Fisher-Yates
// shuffle of an index buffer (O(d)); large k far below d uses Floyd's
// algorithm with an open-addressing hash set (O(k)).
func (s *Scratch) choose(r *rng.Rand, d, k int) []int32 {
	switch {
	case k <= floydLinearMax:
		pick := s.pick[:0]
		for j := d - k; j < d; j++ {
			t := int32(r.Uint32n(uint32(j + 1)))
			for _, p := range pick {
				if p == t { // already chosen: take j, which cannot be
					t = int32(j)
					break
				}
			}
			pick = append(pick, t)
		}
		s.pick = pick
		return pick
	case d <= denseFactor*k:
		if cap(s.perm) < d {
			s.perm = make([]int32, d)
		}
		perm := s.perm[:d]
		for i := range perm {
			perm[i] = int32(i)
		}
		for i := 0; i < k; i++ {
			j := i + int(r.Uint32n(uint32(d-i)))
			perm[i], perm[j] = perm[j], perm[i]
		}
		return perm[:k]
	default:
		size := 1 << bits.Len(uint(2*k)) // power of two > 2k: load factor < 1/2
		if cap(s.set) < size {
			s.set = make([]int32, size)
		}
		set := s.set[:size]
		for i := range set {
			set[i] = -1
		}
		shift := 32 - uint(bits.TrailingZeros(uint(size)))
		mask := uint32(size - 1)
		insert := func(t int32) bool { // false when t was present
			h := (uint32(t) * 0x9e3779b1) >> shift
			for {
				switch set[h] {
				case -1:
					set[h] = t
					return true
				case t:
					return false
				}
				h = (h + 1) & mask
			}
		}
		pick := s.pick[:0]
		for j := d - k; j < d; j++ {
			t := int32(r.Uint32n(uint32(j + 1)))
			if !insert(t) {
				t = int32(j)
				insert(t)
			}
			pick = append(pick, t)
		}
		s.pick = pick
		return pick
	}
}
