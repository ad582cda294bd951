package sample

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// gasShuffleTag separates the GAS part shuffle's random stream from the
// other streams derived from the same seed.
const gasShuffleTag = 0x4741_5350_4152_5453

// GAS is the loader of GNNAutoScale (GAS) training, the counterpart of
// PyG's ClusterData plus GAS's SubgraphLoader. The nodes are renumbered so
// that each part of a partition occupies one contiguous range of ids; a
// mini-batch is a few whole parts (the in-batch nodes) plus their 1-hop halo,
// and every layer aggregates the full neighborhoods of the in-batch nodes,
// reading the halo's embeddings of layers >= 1 from historical embeddings.
//
// All ids the loader hands out (Nodes, Halo, PushRanges) are permuted ids,
// i.e. rows of Graph(); map them back with Inv (or OriginalIDs), and permute
// per-node data (features, labels, masks) with Perm once.
//
// Empty parts are allowed: they occupy an empty range, Batches skips them,
// and Batch accepts them (they contribute no nodes). A GAS is safe for
// concurrent use by several goroutines.
type GAS struct {
	// Perm maps an original node id to its permuted id: node v becomes
	// Perm[v]. Within a part the original order is kept (stable).
	Perm []int32
	// Inv is Perm's inverse: permuted id i is original node Inv[i].
	Inv []int32
	// PartPtr holds the parts' offsets (len k+1): part p is the permuted
	// id range [PartPtr[p], PartPtr[p+1]).
	PartPtr []int64

	g    *graph.CSR // permuted graph
	k    int
	pool sync.Pool // *Scratch sized for g
}

// Range is a contiguous range of permuted node ids [Offset, Offset+Count).
type Range struct {
	Offset, Count int
}

// GASBatch is one GAS mini-batch. The embedded Batch holds, in permuted ids,
// the in-batch nodes followed by the halo (Nodes) and one block per layer
// (Blocks). Every layer uses the same bipartite graph: destinations are the
// InBatch in-batch nodes, sources are the in-batch nodes followed by the
// halo, and row i holds every entry of Graph()'s row Nodes[i] (the full
// neighborhood). Blocks holds the same *graph.Block once per layer, so a
// mutation of one (e.g. SetGCNWeights) applies to all of them.
//
// Layer 0 reads input features for all of Nodes; a layer l >= 1 gets the
// in-batch rows from layer l-1's output and must append the halo rows pulled
// from layer l-1's history, in Halo order, before aggregating.
type GASBatch struct {
	*Batch
	// Parts holds the batch's part ids, ascending (the order of the
	// in-batch nodes).
	Parts []int32
	// InBatch is the number of in-batch nodes (the targets); they are
	// Nodes[:InBatch], ascending.
	InBatch int
	// Halo holds the permuted ids of the neighbors of in-batch nodes that
	// are not in the batch, each once, ascending; it is Nodes[InBatch:].
	Halo []int32
	// PushRanges cover exactly the in-batch nodes with contiguous,
	// ascending, non-adjacent ranges of permuted ids (one per non-empty
	// part, adjacent parts merged). Since the in-batch nodes are sorted,
	// the rows of a range lie contiguously in the layer output too: a
	// range starting at in-batch position j maps output rows
	// [j, j+Count) to history rows [Offset, Offset+Count).
	PushRanges []Range
}

// NewGAS builds the loader for graph g and the partition parts (each node's
// part in [0, k), len(parts) == g.N). Graph rows list the sources a node
// aggregates from, as everywhere in this package. k must lie in
// [1, max(g.N, 1)]; parts may leave some of the k parts empty.
func NewGAS(g *graph.CSR, parts []int32, k int) (*GAS, error) {
	if g == nil {
		return nil, fmt.Errorf("gas: nil graph")
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("gas: %w", err)
	}
	if k < 1 || k > max(g.N, 1) {
		return nil, fmt.Errorf("gas: %d parts for %d nodes; need 1 <= k <= max(nodes, 1)", k, g.N)
	}
	if len(parts) != g.N {
		return nil, fmt.Errorf("gas: %d part assignments for %d nodes", len(parts), g.N)
	}
	ptr := make([]int64, k+1)
	for v, p := range parts {
		if p < 0 || int(p) >= k {
			return nil, fmt.Errorf("gas: node %d is in part %d, out of range [0, %d)", v, p, k)
		}
		ptr[p+1]++
	}
	for p := range k {
		ptr[p+1] += ptr[p]
	}
	next := slices.Clone(ptr[:k])
	perm := make([]int32, g.N)
	inv := make([]int32, g.N)
	for v, p := range parts {
		i := next[p]
		next[p]++
		perm[v] = int32(i)
		inv[i] = int32(v)
	}
	pg, err := g.Permute(perm)
	if err != nil {
		return nil, fmt.Errorf("gas: %w", err)
	}
	s := &GAS{Perm: perm, Inv: inv, PartPtr: ptr, g: pg, k: k}
	s.pool.New = func() any { return NewScratch(pg.N) }
	return s, nil
}

// Graph returns the permuted graph: original node Inv[i] is row i.
func (s *GAS) Graph() *graph.CSR { return s.g }

// NumParts returns k, the number of parts (empty ones included).
func (s *GAS) NumParts() int { return s.k }

// PartRange returns part p's contiguous range of permuted ids.
func (s *GAS) PartRange(p int) (Range, error) {
	if p < 0 || p >= s.k {
		return Range{}, fmt.Errorf("gas: part %d out of range [0, %d)", p, s.k)
	}
	return Range{Offset: int(s.PartPtr[p]), Count: int(s.PartPtr[p+1] - s.PartPtr[p])}, nil
}

// OriginalIDs returns the original ids of the permuted ids ids (a new
// slice). Ids out of range are an error.
func (s *GAS) OriginalIDs(ids []int32) ([]int32, error) {
	out := make([]int32, len(ids))
	for i, v := range ids {
		if v < 0 || int(v) >= len(s.Inv) {
			return nil, fmt.Errorf("gas: permuted id %d (position %d) out of range [0, %d)", v, i, len(s.Inv))
		}
		out[i] = s.Inv[v]
	}
	return out, nil
}

// Batches returns one epoch's batches as lists of part ids: the non-empty
// parts, shuffled by a random stream derived from (seed, epoch), cut into
// consecutive groups of partsPerBatch (the last may be smaller). Every
// non-empty part appears exactly once per epoch; the same (seed, epoch)
// always gives the same batches. A graph without nodes has no batches.
func (s *GAS) Batches(epoch int, partsPerBatch int, seed uint64) ([][]int32, error) {
	if partsPerBatch < 1 {
		return nil, fmt.Errorf("gas batches: %d parts per batch; need at least 1", partsPerBatch)
	}
	order := make([]int32, 0, s.k)
	for p := range s.k {
		if s.PartPtr[p+1] > s.PartPtr[p] {
			order = append(order, int32(p))
		}
	}
	rng.New(gasShuffleTag, seed, uint64(epoch)).Shuffle(order)
	return split(order, partsPerBatch), nil
}

// Batch builds the mini-batch of the parts partIDs (in any order; the batch
// lists them ascending) for a model of layers layers; epoch and index are
// recorded in the Batch. The parts must be distinct and in range, and at
// least one must be non-empty. The result is deterministic.
func (s *GAS) Batch(epoch, index int, partIDs []int32, layers int) (*GASBatch, error) {
	if layers < 1 {
		return nil, fmt.Errorf("gas batch %d: %d layers; need at least 1", index, layers)
	}
	if len(partIDs) == 0 {
		return nil, fmt.Errorf("gas batch %d: no parts", index)
	}
	ps := slices.Clone(partIDs)
	slices.Sort(ps)
	for i, p := range ps {
		if p < 0 || int(p) >= s.k {
			return nil, fmt.Errorf("gas batch %d: part %d out of range [0, %d)", index, p, s.k)
		}
		if i > 0 && ps[i-1] == p {
			return nil, fmt.Errorf("gas batch %d: part %d listed twice", index, p)
		}
	}
	var ranges []Range
	nIn := 0
	for _, p := range ps {
		lo, hi := int(s.PartPtr[p]), int(s.PartPtr[p+1])
		if lo == hi {
			continue
		}
		nIn += hi - lo
		if n := len(ranges); n > 0 && ranges[n-1].Offset+ranges[n-1].Count == lo {
			ranges[n-1].Count += hi - lo
			continue
		}
		ranges = append(ranges, Range{Offset: lo, Count: hi - lo})
	}
	if nIn == 0 {
		return nil, fmt.Errorf("gas batch %d: parts %v are all empty", index, ps)
	}
	if nIn > math.MaxInt32 {
		return nil, fmt.Errorf("gas batch %d: %d in-batch nodes exceed the int32 id range", index, nIn)
	}

	g := s.g
	sc := s.pool.Get().(*Scratch)
	defer s.pool.Put(sc)
	sc.begin()
	// In-batch nodes get local ids 0..nIn-1 in ascending order; count the
	// edges and collect the halo in order of discovery.
	var ne int64
	for _, r := range ranges {
		for v := int32(r.Offset); v < int32(r.Offset+r.Count); v++ {
			sc.add(v)
		}
		ne += g.Indptr[r.Offset+r.Count] - g.Indptr[r.Offset]
	}
	nodes := sc.nodes
	for _, v := range nodes[:nIn] {
		for _, u := range g.Neighbors(v) {
			if sc.lookup(u) < 0 {
				sc.add(u)
			}
		}
	}
	nodes = sc.nodes
	// Sort the halo (ascending ids make history pulls sequential) and
	// give it its final local ids.
	halo := nodes[nIn:]
	slices.Sort(halo)
	for i, u := range halo {
		sc.mark[u] = sc.gen<<32 | uint64(uint32(nIn+i))
	}
	blk := &graph.Block{NumDst: nIn, NumSrc: len(nodes), Indptr: make([]int64, nIn+1), Indices: make([]int32, ne)}
	e := int64(0)
	for i, v := range nodes[:nIn] {
		for _, u := range g.Neighbors(v) {
			blk.Indices[e] = sc.lookup(u)
			e++
		}
		blk.Indptr[i+1] = e
	}
	out := slices.Clone(nodes)
	blocks := make([]*graph.Block, layers)
	for l := range blocks {
		blocks[l] = blk
	}
	return &GASBatch{
		Batch:      &Batch{Epoch: epoch, Index: index, Nodes: out, Blocks: blocks},
		Parts:      ps,
		InBatch:    nIn,
		Halo:       out[nIn:len(out):len(out)],
		PushRanges: ranges,
	}, nil
}
