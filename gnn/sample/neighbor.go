package sample

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// AllNeighbors as a fanout takes every neighbor of a node.
const AllNeighbors = -1

// Neighbor is a GraphSAGE neighbor sampler (as PyG's NeighborLoader and
// SALIENT's sampler): starting from the target nodes, hop h samples up to
// fanouts[h-1] distinct neighbors, uniformly without replacement, of every
// node reached so far (targets included).
//
// Fanouts follow PyG's num_neighbors: fanouts[0] is the number of neighbors
// sampled per target (hop 1), fanouts[1] per node of hop 1's list (hop 2),
// and so on; AllNeighbors (-1) takes all of them. Batch.Blocks run outermost
// (input) layer first, so Blocks[len(fanouts)-1] is hop 1's block (its
// destinations are the targets) and Blocks[0] is the last hop's.
//
// Row v of the graph lists the nodes v aggregates from (messages flow from
// the row's entries to v), and a block row lists the sampled entries of its
// destination's graph row. Sampling picks distinct row positions, so a graph
// with repeated entries in a row (multi-edges) can give repeated sources.
//
// A Neighbor is safe for concurrent use: Sample and Stream take per-goroutine
// Workers from an internal pool. Every batch depends only on (seed, epoch,
// index, targets).
type Neighbor struct {
	g       *graph.CSR
	fanouts []int
	seed    uint64
	drawer  HopDrawer // nil: every hop drawn on the sampling goroutine

	mu   sync.Mutex
	free []*Worker
}

// NewNeighbor returns a sampler over g with the given fanouts (see Neighbor).
// g must satisfy g.Validate; only its shape is checked here.
func NewNeighbor(g *graph.CSR, fanouts []int, seed uint64) (*Neighbor, error) {
	if err := checkGraph(g); err != nil {
		return nil, fmt.Errorf("neighbor sampler: %w", err)
	}
	if len(fanouts) == 0 {
		return nil, errors.New("neighbor sampler: no fanouts (need one per layer)")
	}
	for i, k := range fanouts {
		if k == 0 || k < AllNeighbors {
			return nil, fmt.Errorf("neighbor sampler: fanout %d of hop %d must be positive or -1 (all neighbors)", k, i+1)
		}
	}
	return &Neighbor{g: g, fanouts: append([]int(nil), fanouts...), seed: seed}, nil
}

// checkGraph checks the cheap structural invariants the samplers rely on.
func checkGraph(g *graph.CSR) error {
	if g == nil {
		return errors.New("nil graph")
	}
	if g.N < 0 || len(g.Indptr) != g.N+1 {
		return fmt.Errorf("graph has %d nodes but %d row pointers", g.N, len(g.Indptr))
	}
	if g.Indptr[0] != 0 || g.Indptr[g.N] != int64(len(g.Indices)) {
		return fmt.Errorf("graph row pointers span [%d, %d) but there are %d column indices", g.Indptr[0], g.Indptr[g.N], len(g.Indices))
	}
	return nil
}

// Graph returns the sampled graph.
func (n *Neighbor) Graph() *graph.CSR { return n.g }

// Fanouts returns a copy of the fanouts, hop 1 first.
func (n *Neighbor) Fanouts() []int { return append([]int(nil), n.fanouts...) }

// Seed returns the sampler's seed.
func (n *Neighbor) Seed() uint64 { return n.seed }

// SetDrawer makes the sampler draw the neighbors of every hop with a
// positive fanout through d (e.g. a GPU kernel), and only map and build
// on the sampling goroutine; hops that take all neighbors are still
// sampled there. Call it before sampling; nil restores the CPU draws.
func (n *Neighbor) SetDrawer(d HopDrawer) { n.drawer = d }

// Drawer returns the sampler's HopDrawer, or nil.
func (n *Neighbor) Drawer() HopDrawer { return n.drawer }

// Worker is one goroutine's sampling state for a Neighbor: a Scratch sized
// to the graph and a random generator. Reusing a Worker across batches keeps
// sampling free of per-node allocations; a Worker is not safe for concurrent
// use.
type Worker struct {
	n *Neighbor
	s *Scratch
	r rng.Rand
}

// NewWorker returns a fresh Worker (8 bytes per graph node).
func (n *Neighbor) NewWorker() *Worker {
	return &Worker{n: n, s: NewScratch(n.g.N)}
}

// getWorker takes a Worker from the pool or makes one.
func (n *Neighbor) getWorker() *Worker {
	n.mu.Lock()
	if k := len(n.free); k > 0 {
		w := n.free[k-1]
		n.free = n.free[:k-1]
		n.mu.Unlock()
		return w
	}
	n.mu.Unlock()
	return n.NewWorker()
}

// putWorker returns a Worker to the pool.
func (n *Neighbor) putWorker(w *Worker) {
	n.mu.Lock()
	n.free = append(n.free, w)
	n.mu.Unlock()
}

// Sample samples the batch with the given coordinates using a pooled Worker;
// see Worker.Sample.
func (n *Neighbor) Sample(epoch, index int, targets []int32) (*Batch, error) {
	w := n.getWorker()
	defer n.putWorker(w)
	return w.Sample(epoch, index, targets)
}

// Sample draws the blocks of one batch. The random stream is derived from
// rng.Mix(seed, epoch, index), so the result depends only on those and on
// targets. Targets must be distinct node ids of the graph and not empty.
//
// Batch.Nodes lists the targets first, then the nodes discovered by hop 1 in
// order of discovery (destination by destination, in sampling order), then
// those of hop 2, and so on: every hop's node list is a prefix of the next.
// The returned batch shares no memory with the Worker.
func (w *Worker) Sample(epoch, index int, targets []int32) (*Batch, error) {
	return w.sample(epoch, index, rng.Mix(w.n.seed, uint64(epoch), uint64(index)), targets)
}

// SampleAttempt draws another version of batch (epoch, index): attempt 0 is
// exactly Sample's draw, and every other attempt uses its own random stream
// rng.Mix(seed, epoch, index, attempt), so a memory guard that re-samples a
// batch stays deterministic. Targets may be any non-empty set of distinct
// nodes (e.g. a part of a split batch).
func (w *Worker) SampleAttempt(epoch, index, attempt int, targets []int32) (*Batch, error) {
	if attempt == 0 {
		return w.Sample(epoch, index, targets)
	}
	return w.sample(epoch, index, rng.Mix(w.n.seed, uint64(epoch), uint64(index), uint64(attempt)), targets)
}

func (w *Worker) sample(epoch, index int, seed uint64, targets []int32) (*Batch, error) {
	g, s := w.n.g, w.s
	if len(targets) == 0 {
		return nil, fmt.Errorf("sample batch %d of epoch %d: no targets", index, epoch)
	}
	s.begin()
	n := int32(g.N)
	for i, t := range targets {
		if t < 0 || t >= n {
			return nil, fmt.Errorf("sample batch %d of epoch %d: target %d (position %d) out of range [0, %d)", index, epoch, t, i, g.N)
		}
		if l := s.lookup(t); l >= 0 {
			return nil, fmt.Errorf("sample batch %d of epoch %d: target %d listed twice (positions %d and %d)", index, epoch, t, l, i)
		}
		s.add(t)
	}
	w.r.Seed(seed)

	fan := w.n.fanouts
	hops := len(fan)
	var dims [2 * maxInlineHops]int // numDst, numSrc per hop
	dim := dims[:0]
	if 2*hops > len(dims) {
		dim = make([]int, 0, 2*hops)
	}
	for h := 0; h < hops; h++ {
		numDst := len(s.nodes)
		if d := w.n.drawer; d != nil && fan[h] > 0 {
			if err := w.hopDrawn(d, numDst, fan[h], seed, h); err != nil {
				return nil, fmt.Errorf("sample batch %d of epoch %d, hop %d: %w", index, epoch, h+1, err)
			}
		} else {
			w.hop(numDst, fan[h])
		}
		dim = append(dim, numDst, len(s.nodes))
	}
	return w.batch(epoch, index, dim), nil
}

const maxInlineHops = 8

// hop samples the neighbors of local nodes [0, numDst) with fanout k,
// appending one block's rows to s.indptr and s.edges and new nodes to
// s.nodes. This is the sampler's hot loop.
//
// It is bound by memory latency: per destination a cache miss on the row
// pointers, per sampled edge one on the row entry and one on the stamp
// array, each depending on the one before. Done edge by edge, the processor
// waits for most of them in turn. So the work runs in passes whose loop
// iterations are independent, which lets the processor keep many misses in
// flight (about 3x faster on a products-sized graph):
//  1. gather the row extents of all destinations;
//  2. draw the sampled positions of all rows (no memory misses), then
//     gather the entries at those positions (global ids);
//  3. in chunks: touch the stamps of the chunk's ids (a pure gather that
//     brings them into cache), then map them to local ids in order,
//     assigning new ones.
func (w *Worker) hop(numDst, k int) {
	s := w.s
	indptr, indices := w.n.g.Indptr, w.n.g.Indices

	// Pass 1: row extents.
	if cap(s.start) < numDst {
		s.start = make([]int64, numDst+numDst/4)
		s.deg = make([]int32, numDst+numDst/4)
	}
	start, deg := s.start[:numDst], s.deg[:numDst]
	for i, v := range s.nodes[:numDst] {
		a := indptr[v]
		start[i] = a
		deg[i] = int32(indptr[v+1] - a)
	}

	// Pass 2: positions in Indices and the block's row pointers, then the
	// entries at those positions.
	pos := s.pos[:0]
	rows := append(s.indptr, 0)
	for i := range start {
		a, d := start[i], int(deg[i])
		if k < 0 || d <= k {
			for p := range int64(d) {
				pos = append(pos, a+p)
			}
		} else {
			for _, p := range s.choose(&w.r, d, k) {
				pos = append(pos, a+int64(p))
			}
		}
		rows = append(rows, int64(len(pos)))
	}
	gids := slices.Grow(s.gids[:0], len(pos))[:len(pos)]
	for j, p := range pos {
		gids[j] = indices[p]
	}
	s.pos, s.gids, s.indptr = pos, gids, rows

	w.local(gids)
}

// local is hop's pass 3: it maps the sampled global ids gids to local
// ids in order, assigning new ones, and appends them to s.edges.
func (w *Worker) local(gids []int32) {
	s := w.s
	mark, gen := s.mark, s.gen
	nodes, edges := s.nodes, s.edges
	var sink uint64
	for lo := 0; lo < len(gids); lo += touchChunk {
		chunk := gids[lo:min(lo+touchChunk, len(gids))]
		for _, u := range chunk {
			sink += mark[u]
		}
		for _, u := range chunk {
			m := mark[u]
			if m>>32 == gen {
				edges = append(edges, int32(uint32(m)))
				continue
			}
			l := int32(len(nodes))
			mark[u] = gen<<32 | uint64(uint32(l))
			nodes = append(nodes, u)
			edges = append(edges, l)
		}
	}
	s.sink += sink // keeps the touching loads
	s.nodes, s.edges = nodes, edges
}

// hopDrawn is hop with the neighbors drawn by d: the drawer fills k slots
// per destination, of which the first count are used; they are packed
// into the block's rows, then mapped to local ids (dedup on the host).
func (w *Worker) hopDrawn(d HopDrawer, numDst, k int, seed uint64, h int) error {
	s := w.s
	slots := numDst * k
	if cap(s.gids) < slots {
		s.gids = make([]int32, slots+slots/4)
	}
	if cap(s.deg) < numDst {
		s.deg = make([]int32, numDst+numDst/4)
	}
	out, count := s.gids[:slots], s.deg[:numDst]
	if err := d.DrawHop(s.nodes[:numDst], k, seed, h, out, count); err != nil {
		return err
	}
	rows := append(s.indptr, 0)
	n := 0
	for i, c := range count {
		if c < 0 || int(c) > k {
			return fmt.Errorf("drawer gave %d neighbors for fanout %d", c, k)
		}
		n += copy(out[n:], out[i*k:i*k+int(c)])
		rows = append(rows, int64(n))
	}
	s.indptr = rows
	for _, u := range out[:n] {
		if u < 0 || int(u) >= len(s.mark) {
			return fmt.Errorf("drawer gave node %d, out of range [0, %d)", u, len(s.mark))
		}
	}
	w.local(out[:n])
	return nil
}

// touchChunk is the number of stamps hop touches ahead of using them: big
// enough for many misses in flight, small enough (32 KiB of cache lines) to
// stay in cache until used.
const touchChunk = 512

// batch copies the blocks built in s into a Batch that owns its memory
// (four allocations whatever the number of layers). dim holds numDst,
// numSrc of every hop, hop 1 first.
func (w *Worker) batch(epoch, index int, dim []int) *Batch {
	s := w.s
	hops := len(dim) / 2
	nodes := make([]int32, len(s.nodes))
	copy(nodes, s.nodes)
	edges := make([]int32, len(s.edges))
	copy(edges, s.edges)
	rows := make([]int64, len(s.indptr))
	copy(rows, s.indptr)
	blocks := make([]graph.Block, hops)
	b := &Batch{Epoch: epoch, Index: index, Nodes: nodes, Blocks: make([]*graph.Block, hops)}
	for h := 0; h < hops; h++ {
		numDst, numSrc := dim[2*h], dim[2*h+1]
		ptr := rows[: numDst+1 : numDst+1]
		rows = rows[numDst+1:]
		ne := int(ptr[numDst])
		blk := &blocks[h]
		blk.NumDst, blk.NumSrc = numDst, numSrc
		blk.Indptr = ptr
		blk.Indices = edges[:ne:ne]
		edges = edges[ne:]
		b.Blocks[hops-1-h] = blk
	}
	return b
}
