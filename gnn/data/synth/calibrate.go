package synth

import (
	"math"
)

// Calibration: how many edge draws M give the wanted number of distinct
// undirected edges once duplicates and self-loops are dropped, and with what
// draw homophily is the wanted fraction of those edges inside classes?
//
// One draw produces the unordered pair {u, v} (u != v) with probability
// θ_u·θ_v·A(c_u, c_v), where
//
//	A(c, c) = 2h/Θ_c                         (both orders, inside class c)
//	A(c, d) = (1-h)·(1/(1-Θ_c) + 1/(1-Θ_d))   (c != d)
//
// so after M draws the pair is present with probability 1-exp(-M·θ_u·θ_v·A)
// (Poisson approximation) and the expected number of distinct edges is
// D(M) = Σ_{u<v} 1-exp(-M·θ_u·θ_v·A(c_u,c_v)).
//
// Nodes are grouped by θ on a fine logarithmic grid, per class for the
// intra-class pairs and over all nodes for the inter-class ones. Inter-class
// pairs use one factor 2ā(1-h) with ā = 1/(1-Σ_c Θ_c²), which gets their
// expected number of draws right and approximates only their (rare)
// duplicates; they are summed over all pairs minus the same-class pairs.
// D is increasing and concave in M, so Newton's method converges quickly.

// maxPairs bounds the group pairs one evaluation of D visits.
const maxPairs = 4 << 20

type group struct {
	n     float64 // nodes in the group
	theta float64 // their mean θ
}

// grouping holds the θ-groups of every class (perClass[classOff[c]:classOff[c+1]])
// and of all nodes together.
type grouping struct {
	perClass []group
	classOff []int
	all      []group
}

// groupNodes buckets θ with ratio 1.05 between bucket edges, coarser if that
// would make D too expensive to evaluate.
func groupNodes(m *model) *grouping {
	lmin, lmax := math.Inf(1), math.Inf(-1)
	for _, t := range m.theta {
		l := math.Log(t)
		lmin, lmax = min(lmin, l), max(lmax, l)
	}
	for step := math.Log(1.05); ; step *= 1.5 {
		buckets := int((lmax-lmin)/step) + 1
		bucket := func(t float64) int { return min(int((math.Log(t)-lmin)/step), buckets-1) }
		g := &grouping{classOff: make([]int, m.classes+1)}
		cnt := make([]float64, buckets)
		sum := make([]float64, buckets)
		var touched []int
		pairs := 0
		for c := 0; c < m.classes; c++ {
			touched = touched[:0]
			for _, e := range m.nodeTab[m.classStart[c]:m.classStart[c+1]] {
				t := m.theta[e.self]
				b := bucket(t)
				if cnt[b] == 0 {
					touched = append(touched, b)
				}
				cnt[b]++
				sum[b] += t
			}
			for _, b := range touched {
				g.perClass = append(g.perClass, group{n: cnt[b], theta: sum[b] / cnt[b]})
				cnt[b], sum[b] = 0, 0
			}
			g.classOff[c+1] = len(g.perClass)
			pairs += len(touched) * (len(touched) + 1) / 2
		}
		for _, t := range m.theta {
			b := bucket(t)
			cnt[b]++
			sum[b] += t
		}
		for b := range cnt {
			if cnt[b] > 0 {
				g.all = append(g.all, group{n: cnt[b], theta: sum[b] / cnt[b]})
			}
		}
		pairs += len(g.all) * (len(g.all) + 1) / 2
		if pairs <= maxPairs || buckets == 1 {
			return g
		}
	}
}

// pairSum adds up, over the pairs of nodes of the groups gs, the probability
// of being present and its derivative in M, for pair multiplicity
// M·θ_u·θ_v·factor.
func pairSum(gs []group, draws, factor float64) (d, dd float64) {
	if factor == 0 {
		return 0, 0
	}
	for a, ga := range gs {
		for b := a; b < len(gs); b++ {
			gb := gs[b]
			pairs := ga.n * gb.n
			if a == b {
				pairs = ga.n * (ga.n - 1) / 2
			}
			if pairs == 0 {
				continue
			}
			x := draws * ga.theta * gb.theta * factor
			em := math.Expm1(-x) // exp(-x) - 1
			d -= pairs * em
			dd += pairs * x * (1 + em)
		}
	}
	return d, dd / draws
}

// distinct returns D(M), D'(M) and the intra-class part of D(M) for draw
// homophily h.
func distinct(g *grouping, m *model, h, draws float64, workers int) (d, dd, intra float64) {
	interFactor := 0.0
	if h < 1 && m.classes > 1 {
		sq := 0.0
		for _, t := range m.classTheta {
			sq += t * t
		}
		interFactor = 2 * (1 - h) / (1 - sq)
	}
	type part struct{ d, dd, in float64 }
	parts := make([]part, m.classes+1)
	parallelFor(workers, m.classes+1, func(c int) {
		if c == m.classes { // inter-class pairs over all nodes
			parts[c].d, parts[c].dd = pairSum(g.all, draws, interFactor)
			return
		}
		gs := g.perClass[g.classOff[c]:g.classOff[c+1]]
		in, inD := pairSum(gs, draws, 2*h/m.classTheta[c])
		same, sameD := pairSum(gs, draws, interFactor) // not inter-class after all
		parts[c] = part{d: in - same, dd: inD - sameD, in: in}
	})
	for _, p := range parts { // fixed order: deterministic sum
		d += p.d
		dd += p.dd
		intra += p.in
	}
	return d, dd, intra
}

// calibrate returns the number of edge draws that gives about target
// distinct undirected (non-self-loop) edges, and the homophily to draw with
// so that the fraction of distinct edges inside classes is about m.h
// (duplicates and self-loops are more frequent inside classes, so the draw
// homophily is a little higher than the wanted one).
func calibrate(m *model, target float64, workers int) (draws int64, h float64) {
	h = m.h
	if target <= 0 {
		return 0, h
	}
	g := groupNodes(m)
	// Secant iteration on the draw homophily: the intra-class fraction of
	// distinct edges grows smoothly (not always with slope 1) with it. Keep
	// the best setting that reaches the edge target: when classes are too
	// small to hold the wanted intra-class edges, raising h only loses
	// edges to duplicates and self-loops.
	want := m.h
	var mDraws, prevH, prevR float64
	bestH, bestM, bestErr := h, 0.0, math.Inf(1)
	for iter := 0; iter < 12; iter++ {
		var d, intra float64
		mDraws, d, intra = solveDraws(g, m, h, mDraws, target, workers)
		r := 0.0
		if d > 0 {
			r = intra / d
		}
		e := math.Abs(r - want)
		if d < 0.999*target {
			e = math.Inf(1) // misses the edge target: only a last resort
		}
		if iter == 0 || e < bestErr {
			bestH, bestM, bestErr = h, mDraws, e
		}
		if want == 0 || want == 1 || d == 0 || math.Abs(r-want) < 2e-4 {
			break
		}
		next := h + (want - r)
		if iter > 0 && r != prevR {
			next = h + (want-r)*(h-prevH)/(r-prevR)
		}
		prevH, prevR = h, r
		h = min(max(next, 0), 1)
		if h == prevH {
			break
		}
	}
	return int64(math.Ceil(bestM)), bestH
}

// solveDraws finds M with D(M) = target by Newton's method, starting from
// start (or target when start is 0). D is increasing and concave, so the
// iterates approach the root from below after at most one step. It stops at
// 16·target draws when the model cannot hold that many distinct edges. It
// returns M, D(M) and its intra-class part.
func solveDraws(g *grouping, m *model, h, start, target float64, workers int) (draws, d, intra float64) {
	maxDraws := 16 * target
	draws = target
	if start > 0 {
		draws = min(start, maxDraws)
	}
	for iter := 0; iter < 50; iter++ {
		var dd float64
		d, dd, intra = distinct(g, m, h, draws, workers)
		if math.Abs(d-target) <= 1e-5*target || dd <= 0 {
			break
		}
		next := draws + (target-d)/dd
		if next >= maxDraws {
			if draws == maxDraws {
				break
			}
			next = maxDraws
		}
		if next <= 0 { // far above a saturated root
			next = draws / 2
		}
		if next <= draws && d < target {
			break
		}
		draws = next
	}
	return draws, d, intra
}
