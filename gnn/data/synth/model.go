package synth

import (
	"cmp"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Stream tags: every random decision draws from rng.New(seed, tag, chunk).
const (
	tagClassOrder uint64 = iota + 1
	tagLabels
	tagTheta
	tagEdges
	tagCentroids
	tagFeatures
	tagSplit
)

// Fixed chunk sizes: they define the random streams, so they must never
// depend on the number of workers.
const (
	nodeChunk = 1 << 14
	edgeChunk = 1 << 16
)

// model is the DC-SBM before any edge is drawn.
type model struct {
	n, classes int
	h          float64   // effective homophily (1 with a single class)
	labels     []int32   // class of every node
	theta      []float64 // degree propensities, sum 1
	classTheta []float64 // Θ_c: sum of theta over class c
	classCum   []float64 // prefix sums of classTheta, len classes+1
	classStart []int     // class c's nodes are slots [classStart[c], classStart[c+1]) of nodeTab
	nodeTab    []aliasEntry
	classTab   []aliasEntry
}

// classSizes splits n nodes into k classes with Zipf shares (exponent skew),
// every class at least one node, largest remainders rounded up. Entry i is
// the size of the i-th largest class.
func classSizes(n, k int, skew float64) []int {
	share := make([]float64, k)
	sum := 0.0
	for i := range share {
		share[i] = math.Pow(float64(i+1), -skew)
		sum += share[i]
	}
	sizes := make([]int, k)
	rest := n - k
	rem := make([]float64, k)
	used := 0
	for i := range share {
		x := share[i] / sum * float64(rest)
		sizes[i] = 1 + int(x)
		used += int(x)
		rem[i] = x - math.Floor(x)
	}
	// Hand out the leftover nodes by largest remainder (ties: larger class).
	if left := rest - used; left > 0 {
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
		for _, i := range idx[:left] {
			sizes[i]++
		}
	}
	return sizes
}

// newModel draws classes and degree propensities and builds the samplers.
func newModel(cfg Config, seed uint64, workers int, rep *reporter) *model {
	n, k := cfg.Nodes, cfg.Classes
	m := &model{n: n, classes: k, h: cfg.Homophily}
	if k == 1 {
		m.h = 1
	}
	rep.start("degrees", int64(n)*3)
	var size []int
	m.labels, size = drawLabels(cfg, seed)
	rep.add(int64(n))
	m.theta = drawTheta(cfg, seed, workers, rep)
	m.buildSamplers(size, workers, rep)
	return m
}

// drawLabels returns every node's class and each class's size: sizes by
// rank, assigned to shuffled class ids, then to shuffled nodes.
func drawLabels(cfg Config, seed uint64) (labels []int32, size []int) {
	n, k := cfg.Nodes, cfg.Classes
	bySize := classSizes(n, k, cfg.ClassSkew)
	order := rng.New(seed, tagClassOrder).Perm(k)
	size = make([]int, k)
	for rank, c := range order {
		size[c] = bySize[rank]
	}
	labels = make([]int32, n)
	i := 0
	for c := 0; c < k; c++ {
		for j := 0; j < size[c]; j++ {
			labels[i] = int32(c)
			i++
		}
	}
	rng.New(seed, tagLabels).Shuffle(labels)
	return labels, size
}

// drawTheta returns the nodes' degree propensities: Pareto with tail
// index γ-1 (x_min = 1), normalized to sum 1 and capped.
func drawTheta(cfg Config, seed uint64, workers int, rep *reporter) []float64 {
	n := cfg.Nodes
	theta := make([]float64, n)
	if cfg.PowerLaw == 0 {
		for v := range theta {
			theta[v] = 1
		}
	} else {
		inv := -1 / (cfg.PowerLaw - 1)
		chunks := (n + nodeChunk - 1) / nodeChunk
		parallelFor(workers, chunks, func(ch int) {
			r := rng.New(seed, tagTheta, uint64(ch))
			lo, hi := ch*nodeChunk, min((ch+1)*nodeChunk, n)
			for v := lo; v < hi; v++ {
				theta[v] = math.Exp(inv * math.Log(1-r.Float64()))
			}
			rep.add(int64(hi - lo))
		})
	}
	// Normalize to sum 1 and cap: expected degree ≈ theta·N·AvgDegree, so a
	// cap of MaxDegreeFrac·N on the degree is theta <= MaxDegreeFrac/AvgDegree.
	normalize(theta)
	if cfg.MaxDegreeFrac > 0 && cfg.AvgDegree > 0 {
		limit := cfg.MaxDegreeFrac / cfg.AvgDegree
		for iter := 0; iter < 100; iter++ {
			clipped := false
			for v, t := range theta {
				if t > limit*(1+1e-9) {
					theta[v] = limit
					clipped = true
				}
			}
			if !clipped {
				break
			}
			normalize(theta)
		}
	}
	return theta
}

// buildSamplers orders the nodes class by class and builds the alias
// tables that draw a node of a class and a class by propensity.
func (m *model) buildSamplers(size []int, workers int, rep *reporter) {
	n, k := m.n, m.classes
	// Class-contiguous order of the nodes and per-class alias tables.
	m.classStart = make([]int, k+1)
	for c := 0; c < k; c++ {
		m.classStart[c+1] = m.classStart[c] + size[c]
	}
	byClass := make([]int32, n)
	cursor := make([]int, k)
	copy(cursor, m.classStart[:k])
	m.classTheta = make([]float64, k)
	for v, c := range m.labels {
		byClass[cursor[c]] = int32(v)
		cursor[c]++
		m.classTheta[c] += m.theta[v]
	}
	m.classCum = make([]float64, k+1)
	for c := 0; c < k; c++ {
		m.classCum[c+1] = m.classCum[c] + m.classTheta[c]
	}
	m.nodeTab = make([]aliasEntry, n)
	parallelFor(workers, k, func(c int) {
		lo, hi := m.classStart[c], m.classStart[c+1]
		w := make([]float64, hi-lo)
		for j, v := range byClass[lo:hi] {
			w[j] = m.theta[v]
		}
		buildAlias(m.nodeTab[lo:hi], w, byClass[lo:hi], make([]int32, 0, hi-lo), make([]int32, 0, hi-lo))
		rep.add(int64(hi - lo))
	})
	ids := make([]int32, k)
	for c := range ids {
		ids[c] = int32(c)
	}
	m.classTab = make([]aliasEntry, k)
	buildAlias(m.classTab, m.classTheta, ids, make([]int32, 0, k), make([]int32, 0, k))
}

func normalize(x []float64) {
	s := 0.0
	for _, t := range x {
		s += t
	}
	for i := range x {
		x[i] /= s
	}
}

// otherClass draws a class other than c with probability proportional to Θ.
func (m *model) otherClass(c int32, r *rng.Rand) int32 {
	k := m.classes
	u := r.Float64() * (m.classCum[k] - m.classTheta[c])
	if u >= m.classCum[c] {
		u += m.classTheta[c]
	}
	// Smallest d with classCum[d+1] > u.
	lo, hi := 0, k-1
	for lo < hi {
		mid := (lo + hi) / 2
		if m.classCum[mid+1] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	d := int32(lo)
	if d == c { // only through rounding at a boundary
		if int(c)+1 < k {
			d = c + 1
		} else {
			d = c - 1
		}
	}
	return d
}

// drawEdges fills src and dst (len = number of draws) with undirected edge
// draws, chunk by chunk from independent streams.
func (m *model) drawEdges(seed uint64, src, dst []int32, workers int, rep *reporter) {
	total := len(src)
	chunks := (total + edgeChunk - 1) / edgeChunk
	h := m.h
	parallelFor(workers, chunks, func(ch int) {
		r := rng.New(seed, tagEdges, uint64(ch))
		// Two passes over small batches: first the random words and table
		// slots (cheap, cache-resident class tables), then the node-table
		// lookups, which miss the cache but are independent of each other
		// so the CPU overlaps them.
		const batch = 512
		var su, sv [batch]int32  // slots in nodeTab
		var lu, lv [batch]uint32 // low random bits for the alias test
		for lo := ch * edgeChunk; lo < min((ch+1)*edgeChunk, total); lo += batch {
			hi := min(lo+batch, (ch+1)*edgeChunk, total)
			k := hi - lo
			for j := 0; j < k; j++ {
				c := draw(m.classTab, r)
				x := r.Uint64()
				base, size := m.classStart[c], m.classStart[c+1]-m.classStart[c]
				su[j], lu[j] = int32(base+slot(x, size)), uint32(x)
				d := c
				if h < 1 && r.Float64() >= h {
					d = m.otherClass(c, r)
				}
				x = r.Uint64()
				base, size = m.classStart[d], m.classStart[d+1]-m.classStart[d]
				sv[j], lv[j] = int32(base+slot(x, size)), uint32(x)
			}
			tab := m.nodeTab
			s, t := src[lo:hi], dst[lo:hi]
			for j := range s {
				s[j] = tab[su[j]].pick(lu[j])
				t[j] = tab[sv[j]].pick(lv[j])
			}
			rep.add(int64(k))
		}
	})
}
