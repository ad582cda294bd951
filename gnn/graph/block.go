package graph

import (
	"fmt"
	"math"
	"sync/atomic"
)

// Block is one layer's bipartite message-passing graph in local indices.
// Its destination nodes are the first NumDst of its NumSrc source nodes
// ("targets first"), so a layer can read the destinations' own rows as the
// prefix of its input. Row i of the CSR lists the sources that destination i
// aggregates from.
type Block struct {
	NumDst  int
	NumSrc  int
	Indptr  []int64 // len NumDst+1
	Indices []int32 // local source indices in [0, NumSrc)
	// Weights optionally holds one weight per edge (aligned with Indices),
	// e.g. GCN normalization; nil means unweighted.
	Weights []float32

	// t caches the transpose (sources as rows). Sampler workers and the
	// trainer may both ask for it, so it is set once, atomically; a Block
	// is therefore not to be copied by value (go vet reports copies).
	t atomic.Pointer[Block]
}

// NumEdges returns the number of edges in the block.
func (b *Block) NumEdges() int64 { return b.Indptr[b.NumDst] }

// Validate checks the block's invariants.
func (b *Block) Validate() error {
	if b.NumDst < 0 || b.NumSrc < b.NumDst {
		return fmt.Errorf("block: %d destinations, %d sources (need 0 <= dst <= src)", b.NumDst, b.NumSrc)
	}
	if len(b.Indptr) != b.NumDst+1 || b.Indptr[0] != 0 {
		return fmt.Errorf("block: bad indptr (len %d, want %d)", len(b.Indptr), b.NumDst+1)
	}
	for i := 0; i < b.NumDst; i++ {
		if b.Indptr[i+1] < b.Indptr[i] {
			return fmt.Errorf("block: indptr not monotone at row %d", i)
		}
	}
	if int64(len(b.Indices)) != b.Indptr[b.NumDst] {
		return fmt.Errorf("block: %d indices, indptr says %d", len(b.Indices), b.Indptr[b.NumDst])
	}
	for i, c := range b.Indices {
		if c < 0 || int(c) >= b.NumSrc {
			return fmt.Errorf("block: source index %d at %d out of range [0, %d)", c, i, b.NumSrc)
		}
	}
	if b.Weights != nil && len(b.Weights) != len(b.Indices) {
		return fmt.Errorf("block: %d weights for %d edges", len(b.Weights), len(b.Indices))
	}
	return nil
}

// Transpose returns the block's reverse adjacency: a CSR over the NumSrc
// sources listing, for each source, the destinations it sends to, with the
// matching weights. It is computed once and cached; backward passes use it to
// turn scatter-adds into race-free gathers. It is safe for concurrent use:
// callers racing on an uncached block may each compute it, but all of them
// get the one transpose that was cached first. Changing the block's edges
// or weights (other than through SetGCNWeights or SetGCNWeightsGlobal,
// which drop the cache) after a transpose was cached leaves it stale.
func (b *Block) Transpose() *Block {
	if t := b.t.Load(); t != nil {
		return t
	}
	t := &Block{NumDst: b.NumSrc, NumSrc: b.NumDst, Indptr: make([]int64, b.NumSrc+1), Indices: make([]int32, len(b.Indices))}
	if b.Weights != nil {
		t.Weights = make([]float32, len(b.Weights))
	}
	for _, c := range b.Indices {
		t.Indptr[c+1]++
	}
	for s := 0; s < b.NumSrc; s++ {
		t.Indptr[s+1] += t.Indptr[s]
	}
	fill := make([]int64, b.NumSrc)
	copy(fill, t.Indptr[:b.NumSrc])
	for d := 0; d < b.NumDst; d++ {
		for e := b.Indptr[d]; e < b.Indptr[d+1]; e++ {
			s := b.Indices[e]
			t.Indices[fill[s]] = int32(d)
			if b.Weights != nil {
				t.Weights[fill[s]] = b.Weights[e]
			}
			fill[s]++
		}
	}
	if b.t.CompareAndSwap(nil, t) {
		return t
	}
	return b.t.Load()
}

// HasTranspose reports whether the block's transpose is already cached, so
// that Transpose returns it without computing anything.
func (b *Block) HasTranspose() bool { return b.t.Load() != nil }

// SetGCNWeights sets Weights to the symmetric GCN normalization
// 1/sqrt(deg_dst(i) * deg_src(j)) with degrees counted inside the block
// (destination in-degree, source out-degree). On a full graph with
// self-loops this is exactly D^-1/2 (A+I) D^-1/2.
func (b *Block) SetGCNWeights() {
	outDeg := make([]int32, b.NumSrc)
	for _, c := range b.Indices {
		outDeg[c]++
	}
	w := make([]float32, len(b.Indices))
	for i := 0; i < b.NumDst; i++ {
		din := float64(b.Indptr[i+1] - b.Indptr[i])
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			w[e] = float32(1 / math.Sqrt(din*float64(outDeg[b.Indices[e]])))
		}
	}
	b.Weights = w
	b.t.Store(nil)
}

// FullBlock returns the block of the whole graph: every node is both a
// destination and a source, rows as in g (shared, not copied).
func FullBlock(g *CSR) *Block {
	return &Block{NumDst: g.N, NumSrc: g.N, Indptr: g.Indptr, Indices: g.Indices}
}

// AddSelfLoops returns a copy of the block in which every destination i
// aggregates from source i (itself: destinations are the sources' prefix)
// exactly once. Weights are dropped; set them again afterwards.
func (b *Block) AddSelfLoops() *Block {
	out := &Block{NumDst: b.NumDst, NumSrc: b.NumSrc, Indptr: make([]int64, b.NumDst+1), Indices: make([]int32, 0, len(b.Indices)+b.NumDst)}
	for i := 0; i < b.NumDst; i++ {
		has := false
		for _, c := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			if c == int32(i) {
				has = true
			}
			out.Indices = append(out.Indices, c)
		}
		if !has {
			out.Indices = append(out.Indices, int32(i))
		}
		out.Indptr[i+1] = int64(len(out.Indices))
	}
	return out
}

// SetGCNWeightsGlobal sets Weights for GCN aggregation using the nodes'
// degrees in the whole graph: deg[j] is the degree (self-loop included) of
// local source j, and deg[i] for i < NumDst that of destination i. Edge
// (i <- j) gets sqrt(deg_i)/(k_i*sqrt(deg_j)), where k_i is the row's length:
// on a full-neighborhood row (k_i == deg_i) this is exactly the symmetric
// normalization 1/sqrt(deg_i*deg_j) of D^-1/2 (A+I) D^-1/2; on a sampled row
// it rescales so that the sum is an unbiased estimate of the full one. Full
// and sampled training and layer-wise inference thus agree on one model.
func (b *Block) SetGCNWeightsGlobal(deg []float32) {
	w := make([]float32, len(b.Indices))
	for i := 0; i < b.NumDst; i++ {
		k := float64(b.Indptr[i+1] - b.Indptr[i])
		if k == 0 {
			continue
		}
		si := math.Sqrt(float64(deg[i]))
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			w[e] = float32(si / (k * math.Sqrt(float64(deg[b.Indices[e]]))))
		}
	}
	b.Weights = w
	b.t.Store(nil)
}
