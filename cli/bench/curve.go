package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/sample"
)

// CacheReport is what `gnnscope bench cache --json` prints: the feature
// cache's hit rate by size on one epoch of neighbor sampling.
type CacheReport struct {
	Data       string `json:"data"`
	Nodes      int    `json:"nodes"`
	Features   int    `json:"features"`
	TrainNodes int    `json:"train_nodes"`
	Fanouts    []int  `json:"fanouts"`
	BatchSize  int    `json:"batch_size"`
	Seed       uint64 `json:"seed"`
	Workers    int    `json:"workers"`
	// Batches and Accesses are the measured epoch's (epoch 1) batches and
	// input rows (the sum of their len(Batch.Nodes)); Touched counts the
	// distinct nodes among them. PreAccesses are the input rows of the
	// frequency policy's pre-sampling pass (epoch 0).
	Batches     int   `json:"batches"`
	Accesses    int64 `json:"accesses"`
	Touched     int   `json:"touched"`
	PreAccesses int64 `json:"pre_accesses"`
	// BytesNoCache is the epoch's host-to-device feature bytes without a
	// cache: Accesses × Features × 4.
	BytesNoCache int64       `json:"bytes_no_cache"`
	Sizes        []CacheSize `json:"sizes"`
	// Seconds spent loading, in the pre-sampling pass, sampling the
	// measured epoch and building and splitting with the caches.
	Seconds CacheSeconds `json:"seconds"`
}

// CacheSeconds are the wall-clock times of a `bench cache` run's phases.
type CacheSeconds struct {
	Load      float64 `json:"load"`
	Presample float64 `json:"presample"`
	Epoch     float64 `json:"epoch"`
	Split     float64 `json:"split"`
}

// CacheSize is one cache size's outcome under each ranking.
type CacheSize struct {
	Percent   float64  `json:"percent"` // of the feature matrix's rows
	Rows      int      `json:"rows"`    // cached rows: floor(percent/100 × nodes)
	Bytes     int64    `json:"bytes"`   // the cache's device bytes
	Degree    CacheHit `json:"degree"`
	Frequency CacheHit `json:"frequency"`
	Oracle    CacheHit `json:"oracle"`
}

// CacheHit is the measured epoch split by one cache: Hits and Misses
// count input rows (from featcache.Cache.Split), HitRate is the share of
// the epoch's accesses on the cached rows (featcache.Covered), BytesH2D
// the feature bytes the misses move (Misses × Features × 4). Exact says
// that Hits is the cached rows' access count and Misses the rest, so that
// BytesH2D / BytesNoCache is exactly 1 − HitRate.
type CacheHit struct {
	HitRate  float64 `json:"hit_rate"`
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	BytesH2D int64   `json:"bytes_h2d"`
	Exact    bool    `json:"exact"`
}

// curveInput is what a cache curve is measured on.
type curveInput struct {
	g        *graph.CSR
	x        []float32 // nodes × f feature matrix
	f        int
	train    []int32
	fanouts  []int
	batch    int
	seed     uint64
	workers  int
	percents []float64 // ascending
	// line, if set, shows a progress line (final: the phase is over).
	line func(final bool, format string, a ...any)
}

// epochAccesses is one sampled epoch: every batch's input rows
// (nodes[offs[i]:offs[i+1]] for batch i, kept only when asked) and the
// access count of every node.
type epochAccesses struct {
	counts []uint32
	nodes  []int32
	offs   []int
	total  int64
}

// measureCurve samples epoch 0 (the frequency policy's pre-sampling pass)
// and epoch 1 (the measured epoch) as training would, ranks the rows by
// degree, by epoch 0's counts and by epoch 1's (the oracle), and splits
// every batch of epoch 1 with a cache of each size and ranking.
func measureCurve(ctx context.Context, in curveInput, rep *CacheReport) error {
	if in.line == nil {
		in.line = func(bool, string, ...any) {}
	}
	n := in.g.N
	if len(in.x) != n*in.f {
		return fmt.Errorf("bench cache: %d feature values for %d nodes of %d", len(in.x), n, in.f)
	}
	if len(in.train) == 0 {
		return fmt.Errorf("bench cache: no training nodes to sample")
	}
	ns, err := sample.NewNeighbor(in.g, in.fanouts, in.seed)
	if err != nil {
		return fmt.Errorf("bench cache: %w", err)
	}
	start := time.Now()
	pre, err := sampleEpoch(ctx, ns, in, 0, false)
	if err != nil {
		return err
	}
	rep.PreAccesses = pre.total
	rep.Seconds.Presample = time.Since(start).Seconds()
	start = time.Now()
	cur, err := sampleEpoch(ctx, ns, in, 1, true)
	if err != nil {
		return err
	}
	rep.Seconds.Epoch = time.Since(start).Seconds()
	rep.Batches, rep.Accesses = len(cur.offs)-1, cur.total
	for _, c := range cur.counts {
		if c > 0 {
			rep.Touched++
		}
	}
	rep.BytesNoCache = cur.total * int64(in.f) * 4

	start = time.Now()
	in.line(false, "ranking rows")
	orders := [3][]int32{featcache.ByDegree(in.g), featcache.ByCount(pre.counts), featcache.ByCount(cur.counts)}
	pre.counts = nil
	dev := cpu.New(in.workers, 0)
	for _, p := range in.percents {
		k := featcache.Budget{Share: p / 100}.Rows(n, in.f)
		sz := CacheSize{Percent: p, Rows: k, Bytes: int64(k) * int64(in.f) * 4}
		for i, hit := range []*CacheHit{&sz.Degree, &sz.Frequency, &sz.Oracle} {
			in.line(false, "splitting epoch 1 with %g%% caches (%s)", p, [3]string{"degree", "frequency", "oracle"}[i])
			if *hit, err = splitEpoch(dev, in, cur, orders[i][:k]); err != nil {
				return err
			}
		}
		rep.Sizes = append(rep.Sizes, sz)
	}
	in.line(true, "split epoch 1 with %d caches in %.1fs", 3*len(in.percents), time.Since(start).Seconds())
	rep.Seconds.Split = time.Since(start).Seconds()
	return nil
}

// sampleEpoch samples every training batch of an epoch on the workers
// and counts each node's accesses; keep also keeps the batches' input
// rows.
func sampleEpoch(ctx context.Context, ns *sample.Neighbor, in curveInput, epoch int, keep bool) (*epochAccesses, error) {
	batches, err := sample.Batches(in.train, in.batch, in.seed, epoch, true)
	if err != nil {
		return nil, fmt.Errorf("bench cache: %w", err)
	}
	ea := &epochAccesses{counts: make([]uint32, in.g.N), offs: []int{0}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	i := 0
	for r := range ns.Stream(ctx, epoch, batches, in.workers) {
		if r.Err != nil {
			return nil, fmt.Errorf("bench cache: epoch %d batch %d: %w", epoch, i, r.Err)
		}
		featcache.Count(ea.counts, r.Batch.Nodes)
		ea.total += int64(len(r.Batch.Nodes))
		if keep {
			ea.nodes = append(ea.nodes, r.Batch.Nodes...)
			ea.offs = append(ea.offs, len(ea.nodes))
		}
		i++
		in.line(false, "sampling epoch %d: batch %d/%d", epoch, i, len(batches))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if i != len(batches) {
		return nil, fmt.Errorf("bench cache: epoch %d ended after %d of %d batches", epoch, i, len(batches))
	}
	in.line(true, "sampled epoch %d: %d batches, %d input rows in %.1fs", epoch, i, ea.total, time.Since(start).Seconds())
	return ea, nil
}

// splitEpoch builds a cache of the rows on dev, splits every batch of ep
// with it (on the workers, each a share of the batches) and frees it.
func splitEpoch(dev *cpu.Device, in curveInput, ep *epochAccesses, rows []int32) (CacheHit, error) {
	c, err := featcache.New(dev, in.x, in.f, rows)
	if err != nil {
		return CacheHit{}, fmt.Errorf("bench cache: %w", err)
	}
	defer c.Free(dev)
	nb := len(ep.offs) - 1
	w := max(1, min(in.workers, nb))
	hits, misses := make([]int64, w), make([]int64, w)
	var wg sync.WaitGroup
	for j := range w {
		wg.Go(func() {
			var s featcache.Split
			for b := j * nb / w; b < (j+1)*nb/w; b++ {
				s = c.Split(ep.nodes[ep.offs[b]:ep.offs[b+1]], featcache.Split{
					HitPos: s.HitPos[:0], HitSlot: s.HitSlot[:0], MissPos: s.MissPos[:0], MissNode: s.MissNode[:0]})
				hits[j] += int64(len(s.HitPos))
				misses[j] += int64(len(s.MissPos))
			}
		})
	}
	wg.Wait()
	var h CacheHit
	for j := range w {
		h.Hits += hits[j]
		h.Misses += misses[j]
	}
	var want int64 // the cached rows' accesses, from the counts
	for _, v := range rows {
		want += int64(ep.counts[v])
	}
	h.HitRate = featcache.Covered(rows, len(rows), ep.counts)
	h.BytesH2D = h.Misses * int64(in.f) * 4
	h.Exact = h.Hits == want && h.Misses == ep.total-want && (ep.total == 0 || h.HitRate == float64(h.Hits)/float64(ep.total))
	return h, nil
}
