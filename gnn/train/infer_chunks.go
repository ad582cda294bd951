package train

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile/units"
)

// evalChunk is one block of layer-wise inference: destinations [lo, hi)
// with all their neighbors as sources.
type evalChunk struct {
	lo, hi int
	blk    *graph.Block // prepared for the model
	src    []int32
	// whole says blk is the destinations' whole CSR rows, edges in the
	// graph's order (nothing cut, nothing added by the model).
	whole bool
	// gblk is blk with the graph's node ids as sources, set when
	// inference reads the host matrices in place (see infer_host.go).
	gblk *graph.Block
}

// minEvalChunk is the smallest inference chunk a budget makes: below it,
// edges are cut instead.
const minEvalChunk = 256

// maxCachedEvalEdges bounds the edges of inference blocks kept between
// evaluations (about 8 bytes each); larger graphs rebuild them each time.
const maxCachedEvalEdges = 64 << 20

// chunks returns the inference blocks, built once and reused by every
// evaluation when the graph is small enough. The blocks are the same for
// every layer and every evaluation: they depend only on the graph.
func (in *inference) chunks(m *nn.Model) ([]evalChunk, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cache != nil {
		return in.cache, nil
	}
	g := in.g
	scratch := sample.NewScratch(g.N)
	var chunks []evalChunk
	size := in.cfg.EvalChunk
	if size <= 0 {
		size = autoChunk(g.N, in.available)
	}
	room := in.room()
	if room > 0 {
		// Chunks whose destination rows alone would not fit are made
		// smaller; with a budget, edges are cut from those that still do
		// not fit.
		for size > 1 && evalPeak(m, size, size) > room {
			size /= 2
		}
	}
	// Consecutive chunks of up to size destinations; with a budget or
	// automatic chunks, each as large as its full neighborhood allows (see
	// nextChunk), and with a budget, edges cut from those that still do
	// not fit.
	var cut int64 // edges dropped from all chunks
	want := size
	for lo := 0; lo < g.N; {
		ch, next, err := in.nextChunk(m, scratch, lo, want, room)
		if err != nil {
			return nil, err
		}
		in.cutEdges += ch.dropped
		cut += ch.dropped
		chunks = append(chunks, ch.evalChunk)
		lo, want = ch.hi, min(size, next)
	}
	in.prepareBlocks(m, chunks, cut > 0)
	if g.NumEdges() <= maxCachedEvalEdges {
		in.cache = chunks
	}
	return chunks, nil
}

// cutOrder is the order in which inference cutting drops the edges of
// the chunk whose destinations start at lo.
func (in *inference) cutOrder(lo int) memory.Order {
	return memory.Order{Rule: in.cfg.cutRule(), Seed: rng.Mix(in.cfg.Seed, uint64(lo), 0x6576616c), MinKeep: in.cutMinKeep()}
}

// evalLayerBytes is the device memory one chunk of layer-wise inference
// holds at its peak in a layer that runs on the chunk's input rows (it has
// no node transform, see evalLayerPeak), mapping in to out columns, with
// ns sources and nd destinations: the input rows, the output, and the
// intermediate (the transformed sources when the layer transforms first,
// the destinations' aggregate otherwise). It is exact for GCN and
// GraphSAGE layers that aggregate first (TestEvalPeakMeasured) and bounds
// the first layer's precomputed-aggregate path.
func evalLayerBytes(in, out, ns, nd int) int64 {
	mid := int64(nd) * int64(in)
	if in > out {
		mid = int64(ns) * int64(out)
	}
	return 4 * (int64(ns)*int64(in) + int64(nd)*int64(out) + mid)
}

// evalPeak is the largest evalLayerPeak over the model's layers, and the
// first layer's inputAggregateBytes: the predicted peak of an inference
// chunk of ns sources and nd destinations.
func evalPeak(m *nn.Model, ns, nd int) int64 {
	p := inputAggregateBytes(m, ns, nd)
	for l := range m.Layers {
		p = max(p, evalLayerPeak(m, l, ns, nd))
	}
	return p
}

// autoRoomShare is the share of the memory available (data.AvailableMemory)
// that automatic inference chunks (Config.EvalChunk 0) may take without a
// budget: the rest is left to the layers' outputs and transformed rows,
// kept for all nodes on the host, and to whatever else runs.
const autoRoomShare = 4

// room returns the bytes an inference chunk's predicted peak may take
// (0: no limit): the budget less the resident bytes; without a budget,
// with automatic chunks, a share of the memory available (no limit when
// that is unknown).
func (in *inference) room() int64 {
	if in.budget > 0 {
		return max(in.budget-in.resident, 1)
	}
	if in.cfg.EvalChunk > 0 {
		return 0
	}
	return autoRoom(in.available)
}

// maxHostChunk bounds automatic chunks (Config.EvalChunk 0) whose memory
// is the host's (the CPU backend): their tensors add to the layers'
// outputs, which inference keeps on the host too, and past this size they
// stop paying. On synth-products (GraphSAGE 3x256, 2.4M nodes) chunks of
// at most 131072 destinations took the process's peak RSS from 16.5 to
// 11.9-12.0 GiB against chunks as large as a quarter of the memory
// available allowed (one of 4.97 GB), the evaluation taking 28.6 and
// 37.1 s against 36.2 s: the same within this machine's noise.
const maxHostChunk = 1 << 17

// autoChunk is the most destinations of an automatic chunk on a graph of
// n nodes: all of them on a GPU (available set: its memory), at most
// maxHostChunk on the host.
func autoChunk(n int, available func() int64) int {
	if available == nil {
		return min(max(n, 1), maxHostChunk)
	}
	return max(n, 1)
}

// autoRoom is the share of the memory available (available, or
// data.AvailableMemory when nil) that automatic chunks may take without a
// budget (0: unknown).
func autoRoom(available func() int64) int64 {
	if available == nil {
		available = data.AvailableMemory
	}
	return available() / autoRoomShare
}

// uncutChunk returns the destinations per chunk of the uncut reference
// inference (see uncut): Config.EvalChunk, or, automatic, the largest
// power-of-two share of the graph whose chunks of as many sources fit the
// share of the memory available (see room), ignoring the budget.
func uncutChunk(m *nn.Model, cfg Config, n int, available func() int64) int {
	if cfg.EvalChunk > 0 {
		return cfg.EvalChunk
	}
	size := autoChunk(n, available)
	if room := autoRoom(available); room > 0 {
		for size > minEvalChunk && evalPeak(m, size, size) > room {
			size /= 2
		}
	}
	return size
}

// builtChunk is one inference chunk as nextChunk builds it.
type builtChunk struct {
	evalChunk
	dropped int64 // edges cut from it
}

// rangeBlock is the inference block of destinations [lo, hi) with all
// their neighbors as sources.
func rangeBlock(g *graph.CSR, lo, hi int, scratch *sample.Scratch) (*graph.Block, []int32, error) {
	dst := make([]int32, hi-lo)
	for i := range dst {
		dst[i] = int32(lo + i)
	}
	return sample.FullBlock(g, dst, scratch)
}

// nextChunk builds the inference chunk of the destinations from lo on:
// want of them (fewer at the graph's end) or, with room for its predicted
// peak (see room; 0: none), as many as fit with their full neighborhood:
// smaller chunks cost no accuracy, only time (more chunks gather more
// source rows in all), so each chunk is the largest that fits, down to
// minEvalChunk destinations, whose edges are then cut to fit a budget. A
// try that does not fit shrinks the chunk by the square of the ratio of
// the room to its need (its sources grow more slowly than its
// destinations). It returns the chunk and, with room, the size to try
// next: a sixteenth more than this one, so that chunk sizes follow the
// graph's density.
func (in *inference) nextChunk(m *nn.Model, scratch *sample.Scratch, lo, want int, room int64) (builtChunk, int, error) {
	g := in.g
	n := min(want, g.N-lo)
	for {
		blk, src, err := rangeBlock(g, lo, lo+n, scratch)
		if err != nil {
			return builtChunk{}, 0, err
		}
		if need := evalPeak(m, blk.NumSrc, blk.NumDst); room > 0 && n > minEvalChunk && need > room {
			r := max(0, float64(room)/float64(need))
			n = max(minEvalChunk, min(n-1, int(float64(n)*r*r)))
			continue
		}
		blk, src, dropped, err := in.cutChunk(m, blk, src, lo)
		if err != nil {
			return builtChunk{}, 0, err
		}
		next := want
		if room > 0 {
			next = n + n/16 + 1
		}
		return builtChunk{evalChunk{lo: lo, hi: lo + n, blk: blk, src: src, whole: dropped == 0}, dropped}, next, nil
	}
}

// cutMinKeep returns the neighbors every inference row keeps from a cut
// (Config.CutMinKeep), resolving 0 to the largest floor the cut leaves
// room for: with EvalCut, the largest k such that the neighbors beyond the
// first k of every row (self-loops aside) are at least the edges to cut,
// so that the cut spreads over the longest rows and every node keeps as
// many neighbors as any cut of that size can leave it; without EvalCut
// (cuts only to fit the budget), half the mean degree, rounded up.
func (in *inference) cutMinKeep() int {
	switch k := in.cfg.CutMinKeep; {
	case k > 0:
		return k
	case k < 0:
		return 0
	}
	if in.minKeepSet {
		return in.minKeep
	}
	g := in.g
	k := 0
	if g.N > 0 && in.cfg.EvalCut == 0 {
		k = int((g.NumEdges() + 2*int64(g.N) - 1) / (2 * int64(g.N)))
	} else if g.N > 0 {
		// rows[l] counts the rows of l neighbors; room(k) = sum over rows
		// of max(0, l-k) falls as k grows.
		var rows []int64
		for v := 0; v < g.N; v++ {
			l := 0
			for _, u := range g.Neighbors(int32(v)) {
				if u != int32(v) {
					l++
				}
			}
			if l >= len(rows) {
				rows = append(rows, make([]int64, l+1-len(rows))...)
			}
			rows[l]++
		}
		target := int64(math.Ceil(in.cfg.EvalCut * float64(g.NumEdges())))
		// Going down from the longest row: above holds the rows longer
		// than k, room the neighbors beyond k in them.
		var above, room int64
		for k = len(rows) - 1; k > 0; k-- {
			above += rows[k]
			room += above // every row longer than k-1 has one more beyond k-1
			if room >= target {
				k--
				break
			}
		}
		k = max(k, 0)
	}
	in.minKeep, in.minKeepSet = k, true
	return k
}

// prepareBlocks prepares the inference chunks' blocks for model m
// (GCN weights, self-loops); cut says edges were dropped from some, whose
// GCN weights then follow Config.CutNorm.
func (in *inference) prepareBlocks(m *nn.Model, chunks []evalChunk, cut bool) {
	norm := in.cfg.CutNorm
	if norm == "" {
		norm = CutNormRenorm
	}
	deg := in.deg
	if cut && norm == CutNormRenorm {
		deg = cutDegrees(chunks, in.g.N)
	}
	for i := range chunks {
		blk := m.PrepareBlock(chunks[i].blk, chunks[i].src, deg)
		chunks[i].whole = chunks[i].whole && blk == chunks[i].blk
		if cut && norm == CutNormKeep && blk.Weights != nil {
			// PrepareBlock weighs edge (i <- j) of a row of k_i edges (its
			// self-loop included) sqrt(d_i)/(k_i sqrt(d_j)); times k_i/d_i
			// it is the full graph's 1/sqrt(d_i d_j).
			src := chunks[i].src
			for d := 0; d < blk.NumDst; d++ {
				f := float32(float64(blk.Indptr[d+1]-blk.Indptr[d]) / float64(in.deg[src[d]]))
				for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
					blk.Weights[e] *= f
				}
			}
		}
		chunks[i].blk = blk
	}
}

// cutDegrees returns each node's degree + 1 (its self-loop) in the graph
// the inference chunks keep: the edges left in its own row. Every node is
// the destination of exactly one chunk.
func cutDegrees(chunks []evalChunk, n int) []float32 {
	deg := make([]float32, n)
	for _, ch := range chunks {
		for d := 0; d < ch.blk.NumDst; d++ {
			deg[ch.src[d]] = float32(ch.blk.Indptr[d+1]-ch.blk.Indptr[d]) + 1
		}
	}
	return deg
}

// cutChunk applies inference cutting to one chunk's raw block: EvalCut's
// fraction of its edges, and as many more as the budget needs, dropped by
// the cut rule. It returns the block and its source ids (unchanged when
// nothing is cut) and the edges dropped.
func (in *inference) cutChunk(m *nn.Model, blk *graph.Block, src []int32, lo int) (*graph.Block, []int32, int64, error) {
	if in.budget == 0 && in.cfg.EvalCut == 0 {
		return blk, src, 0, nil
	}
	limit := blk.NumEdges()
	if in.cfg.EvalCut > 0 {
		limit = int64(float64(limit) * (1 - in.cfg.EvalCut))
	}
	room := in.budget - in.resident
	fits := func(ns int, ne int64) bool {
		return ne <= limit && (in.budget == 0 || evalPeak(m, ns, blk.NumDst) <= room)
	}
	if fits(blk.NumSrc, blk.NumEdges()) {
		return blk, src, 0, nil
	}
	order, err := in.cutOrder(lo).Prefix(blk, src, in.deg, blk.NumEdges())
	if err != nil {
		return nil, nil, 0, err
	}
	out, keep, dropped, ok := memory.Cut(blk, order, fits)
	if !ok {
		return nil, nil, 0, fmt.Errorf("inference chunk of %d nodes needs %s even without edges, over the memory budget %s: lower --eval-chunk",
			blk.NumDst, units.FormatSize(in.resident+evalPeak(m, blk.NumDst, blk.NumDst)), units.FormatSize(in.budget))
	}
	if keep == nil {
		return blk, src, 0, nil
	}
	ns := make([]int32, len(keep))
	for i, k := range keep {
		ns[i] = src[k]
	}
	return out, ns, dropped, nil
}

// deviceAvailable is what automatic inference chunks are sized from
// without a budget on dev: a GPU's memory less what is live on it, or nil
// (the host's available memory) on the CPU, where chunks live in host
// memory.
func deviceAvailable(dev device.Device) func() int64 {
	d, ok := device.Unwrap(dev).(device.Describer)
	if !ok {
		return nil
	}
	info := d.Info()
	if info.Backend != device.KindCUDA || info.Memory <= 0 {
		return nil
	}
	return func() int64 { return max(info.Memory-dev.Mem().Stats().Live, 0) }
}
