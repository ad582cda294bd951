package partition

import (
	"fmt"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// DefaultImbalance is the balance tolerance used when Options.Imbalance is
// zero: the largest part may hold 3% more than the average, as METIS's
// default ufactor of 30 allows.
const DefaultImbalance = 1.03

// Options configure KWay.
type Options struct {
	// Seed makes the randomized choices (visiting orders, growing seeds)
	// reproducible: the same graph, k and seed give the same partition.
	Seed uint64
	// Imbalance is the largest allowed ratio of a part's size (its total
	// weight, with VertexWeights) to the average; 0 means
	// DefaultImbalance. It must be >= 1.
	Imbalance float64
	// RefinePasses bounds the greedy refinement passes per level; 0 means 10.
	RefinePasses int
	// Progress, if not nil, receives a stage name (coarsen, initial,
	// refine) and the fraction of it done.
	Progress func(stage string, frac float64)
	// VertexWeights, if not nil, gives each node's weight (at least 1; one
	// per node): parts then balance their total weight instead of their
	// node count, as METIS does with vertex weights. Weighing each node by
	// its degree + 1, say, balances the edges the parts hold.
	VertexWeights []int32
}

// Result is a k-way partition.
type Result struct {
	// Parts holds each node's part, in [0, k).
	Parts []int32
	// EdgeCut is the number of undirected edges between different parts.
	EdgeCut int64
	// Balance is the largest part's size over the average size n/k.
	Balance float64
	// WeightBalance is the largest part's total vertex weight over the
	// average weight (Balance when no VertexWeights were given).
	WeightBalance float64
	// Sizes holds each part's node count.
	Sizes []int
	// Levels is the number of graphs in the multilevel hierarchy, the
	// input included; CoarsestNodes is the size of the smallest one.
	Levels, CoarsestNodes int
}

// KWay partitions g into k parts of at most Imbalance times the average
// size, with few edges between parts (see the package documentation for
// the method). The graph is taken as undirected (either stored direction
// makes an edge). k must lie in [1, n] (any k >= 1 for an empty graph).
func KWay(g *graph.CSR, k int, opt Options) (*Result, error) {
	if k < 1 {
		return nil, fmt.Errorf("partition: %d parts; need at least 1", k)
	}
	if g == nil {
		return nil, fmt.Errorf("partition: nil graph")
	}
	if g.N > 0 && k > g.N {
		return nil, fmt.Errorf("partition: %d parts for %d nodes; at most one part per node", k, g.N)
	}
	ub := opt.Imbalance
	if ub == 0 {
		ub = DefaultImbalance
	}
	if !(ub >= 1) || math.IsInf(ub, 0) {
		return nil, fmt.Errorf("partition: imbalance %v; need a finite ratio >= 1", opt.Imbalance)
	}
	passes := opt.RefinePasses
	if passes <= 0 {
		passes = 10
	}
	progress := func(stage string, frac float64) {
		if opt.Progress != nil {
			opt.Progress(stage, frac)
		}
	}
	wg, err := fromCSR(g)
	if err != nil {
		return nil, err
	}
	if w := opt.VertexWeights; w != nil {
		if len(w) != wg.n {
			return nil, fmt.Errorf("partition: %d vertex weights for %d nodes", len(w), wg.n)
		}
		wg.tvwgt = 0
		for v, x := range w {
			if x < 1 {
				return nil, fmt.Errorf("partition: node %d has weight %d; weights must be at least 1", v, x)
			}
			wg.vwgt[v] = x
			wg.tvwgt += int64(x)
		}
	}
	res := &Result{Parts: make([]int32, wg.n), Levels: 1, CoarsestNodes: wg.n}
	if k > 1 && wg.n > 0 {
		r := rng.New(opt.Seed, 0x6d657469735f6b77)
		progress("coarsen", 0)
		coarsenTo := max(wg.n/(20*max(1, int(math.Log2(float64(k))))), 30*k)
		levels := coarsen(wg, coarsenTo, r)
		progress("coarsen", 1)
		res.Levels, res.CoarsestNodes = len(levels), levels[len(levels)-1].g.n

		progress("initial", 0)
		cg := levels[len(levels)-1].g
		// Each of the ~log2 k bisections gets a share of the tolerance;
		// k-way refinement and balancing enforce the final bound.
		ubB := math.Pow(ub, 1/math.Max(1, math.Log2(float64(k))))
		where := recursiveBisect(cg, k, ubB, r)
		progress("initial", 1)

		s := newKState(k, ub)
		for l := len(levels) - 1; l >= 0; l-- {
			if l < len(levels)-1 {
				where = project(levels[l], where)
			}
			s.reset(levels[l].g, where)
			s.balance()
			s.refine(passes, r)
			s.balance()
			progress("refine", float64(len(levels)-l)/float64(len(levels)))
		}
		res.Parts = where
	}
	res.Sizes, err = partSizes(res.Parts, k)
	if err != nil {
		return nil, err
	}
	res.EdgeCut = wg.cut(res.Parts)
	res.Balance = balanceOf(res.Sizes, wg.n, k)
	res.WeightBalance = res.Balance
	if opt.VertexWeights != nil && wg.tvwgt > 0 {
		pw := make([]int64, k)
		for v, p := range res.Parts {
			pw[p] += int64(wg.vwgt[v])
		}
		res.WeightBalance = float64(slices.Max(pw)) * float64(k) / float64(wg.tvwgt)
	}
	return res, nil
}

// kstate is a k-way partition of one level under refinement.
type kstate struct {
	k       int
	ub      float64
	g       *wgraph
	where   []int32
	pw      []int64
	maxpw   int64
	minpw   int64
	cnt     []int64 // scratch: connectivity to each part
	touched []int32
}

func newKState(k int, ub float64) *kstate {
	return &kstate{k: k, ub: ub, pw: make([]int64, k), cnt: make([]int64, k)}
}

func (s *kstate) reset(g *wgraph, where []int32) {
	s.g, s.where = g, where
	clear(s.pw)
	for v := 0; v < g.n; v++ {
		s.pw[where[v]] += int64(g.vwgt[v])
	}
	s.maxpw = max(int64(s.ub*float64(g.tvwgt)/float64(s.k)), (g.tvwgt+int64(s.k)-1)/int64(s.k))
	s.minpw = int64(float64(g.tvwgt) / float64(s.k) / s.ub)
}

// connect fills cnt and touched with v's edge weight to each adjacent part
// (its own part always included) and reports whether v is on the boundary.
func (s *kstate) connect(v int32) bool {
	g := s.g
	own := s.where[v]
	s.touched = append(s.touched[:0], own)
	s.cnt[own] = 0
	boundary := false
	for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
		p := s.where[g.adjncy[j]]
		if p != own {
			boundary = true
			if s.cnt[p] == 0 {
				s.touched = append(s.touched, p)
			}
		}
		s.cnt[p] += int64(g.adjwgt[j])
	}
	return boundary
}

func (s *kstate) clearCnt() {
	for _, p := range s.touched {
		s.cnt[p] = 0
	}
}

func (s *kstate) move(v, to int32) {
	w := int64(s.g.vwgt[v])
	s.pw[s.where[v]] -= w
	s.pw[to] += w
	s.where[v] = to
}

// onBoundary reports whether v has a neighbor in another part.
func (s *kstate) onBoundary(v int32) bool {
	g := s.g
	own := s.where[v]
	for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
		if s.where[g.adjncy[j]] != own {
			return true
		}
	}
	return false
}

// refine runs greedy boundary passes: each boundary vertex, in random
// order, moves to the adjacent part with the largest cut gain that has
// room; zero-gain moves are taken when they even out part weights. It
// stops after a pass that moves almost nothing.
func (s *kstate) refine(passes int, r *rng.Rand) {
	g := s.g
	bnd := make([]int32, 0, g.n/4)
	for pass := 0; pass < passes; pass++ {
		bnd = bnd[:0]
		for v := int32(0); v < int32(g.n); v++ {
			if s.onBoundary(v) {
				bnd = append(bnd, v)
			}
		}
		r.Shuffle(bnd)
		moves := 0
		for _, v := range bnd {
			if !s.connect(v) {
				s.clearCnt()
				continue
			}
			own := s.where[v]
			vw := int64(g.vwgt[v])
			if s.pw[own]-vw < s.minpw {
				s.clearCnt()
				continue
			}
			id := s.cnt[own]
			best, bestGain := int32(-1), int64(math.MinInt64)
			for _, p := range s.touched[1:] {
				if s.pw[p]+vw > s.maxpw {
					continue
				}
				gain := s.cnt[p] - id
				if gain > bestGain || (gain == bestGain && s.pw[p] < s.pw[best]) {
					best, bestGain = p, gain
				}
			}
			s.clearCnt()
			if best < 0 {
				continue
			}
			if bestGain > 0 || (bestGain == 0 && s.pw[best]+vw < s.pw[own]) {
				s.move(v, best)
				moves++
			}
		}
		if moves <= len(bnd)/1000 {
			break
		}
	}
}

// balance moves vertices out of parts heavier than the limit: first the
// moves to adjacent parts with room that cost the least cut, then, if a
// part is still too heavy, moves to the lightest part.
func (s *kstate) balance() {
	over := false
	for _, w := range s.pw {
		if w > s.maxpw {
			over = true
		}
	}
	if !over {
		return
	}
	g := s.g
	type cand struct {
		v, to int32
		gain  int64
	}
	var cands []cand
	for v := int32(0); v < int32(g.n); v++ {
		own := s.where[v]
		if s.pw[own] <= s.maxpw {
			continue
		}
		s.connect(v)
		vw := int64(g.vwgt[v])
		c := cand{v: v, to: -1, gain: -s.cnt[own]}
		for _, p := range s.touched[1:] {
			if s.pw[p]+vw <= s.maxpw && (c.to < 0 || s.cnt[p]-s.cnt[own] > c.gain) {
				c.to, c.gain = p, s.cnt[p]-s.cnt[own]
			}
		}
		s.clearCnt()
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.gain > b.gain:
			return -1
		case a.gain < b.gain:
			return 1
		}
		return 0
	})
	for _, c := range cands {
		own := s.where[c.v]
		if s.pw[own] <= s.maxpw {
			continue
		}
		vw := int64(g.vwgt[c.v])
		to := c.to
		if to < 0 || s.pw[to]+vw > s.maxpw {
			to = 0
			for p := range s.pw {
				if s.pw[p] < s.pw[to] {
					to = int32(p)
				}
			}
			if to == own || s.pw[to]+vw > s.maxpw {
				continue
			}
		}
		s.move(c.v, to)
	}
}

// DegreeWeights returns vertex weights that balance edges: each node's
// stored degree + 1 (capped at the largest int32), for
// Options.VertexWeights.
func DegreeWeights(g *graph.CSR) []int32 {
	w := make([]int32, g.N)
	for v := range w {
		w[v] = int32(min(g.Indptr[v+1]-g.Indptr[v]+1, math.MaxInt32))
	}
	return w
}
