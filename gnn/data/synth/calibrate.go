package synth

import (
	"math"
)

// Calibration: how many edge draws M give the wanted number of distinct
// undirected edges once duplicates and self-loops are dropped?
//
// One draw produces the unordered pair {u, v} (u != v) with probability
// θ_u·θ_v·A(c_u, c_v), where
//
//	A(c, c) = 2h/Θ_c                       (both orders, inside class c)
//	A(c, d) = (1-h)·(1/(1-Θ_c) + 1/(1-Θ_d)) (c != d)
//
// so after M draws the pair is present with probability 1-exp(-M·θ_u·θ_v·A)
// (Poisson approximation) and the expected number of distinct edges is
// D(M) = Σ_{u<v} 1-exp(-M·θ_u·θ_v·A(c_u,c_v)). Nodes are grouped by class and
// by θ on a fine logarithmic grid, which makes D a sum over pairs of groups;
// D is increasing and concave in M, so Newton's method from below converges
// monotonically.

// maxGroups bounds the number of (class, θ-bucket) groups: the evaluation
// costs groups²/2 exponentials.
const maxGroups = 2048

type group struct {
	class int32
	n     float64 // nodes in the group
	theta float64 // their mean θ
}

// groupNodes buckets the nodes by class and log θ with bucket ratio at most
// 1.05, coarser if that gives more than maxGroups groups. It returns nil when
// even one group per class is too many (then the caller skips calibration).
func groupNodes(m *model) []group {
	if m.classes > maxGroups {
		return nil
	}
	lmin, lmax := math.Inf(1), math.Inf(-1)
	for _, t := range m.theta {
		l := math.Log(t)
		lmin, lmax = min(lmin, l), max(lmax, l)
	}
	for step := math.Log(1.05); ; step *= 1.5 {
		buckets := int((lmax-lmin)/step) + 1
		if buckets > 1 && m.classes*buckets > 1<<24 {
			continue
		}
		cnt := make([]float64, m.classes*buckets)
		sum := make([]float64, m.classes*buckets)
		for v, t := range m.theta {
			b := min(int((math.Log(t)-lmin)/step), buckets-1)
			g := int(m.labels[v])*buckets + b
			cnt[g]++
			sum[g] += t
		}
		var gs []group
		for g, c := range cnt {
			if c > 0 {
				gs = append(gs, group{class: int32(g / buckets), n: c, theta: sum[g] / c})
			}
		}
		if len(gs) <= maxGroups || buckets == 1 {
			if len(gs) > maxGroups {
				return nil
			}
			return gs
		}
	}
}

// distinct returns D(M), D'(M) and the part of D(M) inside classes for the
// grouped model with homophily h.
func distinct(gs []group, m *model, h, draws float64, workers int) (d, dd, intra float64) {
	// pair factor A(c, d).
	same := make([]float64, m.classes)
	other := make([]float64, m.classes)
	for c, t := range m.classTheta {
		same[c] = 2 * h / t
		if t < 1 {
			other[c] = 1 / (1 - t)
		}
	}
	rowD := make([]float64, len(gs))
	rowDD := make([]float64, len(gs))
	rowIn := make([]float64, len(gs))
	parallelFor(workers, len(gs), func(a int) {
		ga := gs[a]
		var s, sd, in float64
		for b := a; b < len(gs); b++ {
			gb := gs[b]
			var f float64
			if ga.class == gb.class {
				f = same[ga.class]
			} else {
				f = (1 - h) * (other[ga.class] + other[gb.class])
			}
			x := draws * ga.theta * gb.theta * f // expected multiplicity of one pair
			pairs := ga.n * gb.n
			if a == b {
				pairs = ga.n * (ga.n - 1) / 2
			}
			if pairs == 0 || x == 0 {
				continue
			}
			em := math.Expm1(-x) // exp(-x) - 1
			p := pairs * -em
			s += p
			sd += pairs * x * (1 + em)
			if ga.class == gb.class {
				in += p
			}
		}
		rowD[a], rowDD[a], rowIn[a] = s, sd, in
	})
	for a := range gs { // fixed order: deterministic sum
		d += rowD[a]
		dd += rowDD[a]
		intra += rowIn[a]
	}
	return d, dd / draws, intra
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
	gs := groupNodes(m)
	if gs == nil {
		return int64(math.Ceil(target)), h
	}
	// Secant iteration on the draw homophily: the intra-class fraction of
	// distinct edges grows smoothly (not always with slope 1) with it.
	want := m.h
	var mDraws, prevH, prevR float64
	for iter := 0; iter < 12; iter++ {
		var d, intra float64
		mDraws, d, intra = solveDraws(gs, m, h, mDraws, target, workers)
		if want == 0 || want == 1 || d == 0 {
			break
		}
		r := intra / d
		if math.Abs(r-want) < 2e-4 {
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
	return int64(math.Ceil(mDraws)), h
}

// solveDraws finds M with D(M) = target by Newton's method, starting from
// start (or target when start is 0). D is increasing and concave, so the
// iterates approach the root from below after at most one step. It stops at
// 16·target draws when the model cannot hold that many distinct edges. It
// returns M, D(M) and its intra-class part.
func solveDraws(gs []group, m *model, h, start, target float64, workers int) (draws, d, intra float64) {
	maxDraws := 16 * target
	draws = target
	if start > 0 {
		draws = min(start, maxDraws)
	}
	for iter := 0; iter < 50; iter++ {
		var dd float64
		d, dd, intra = distinct(gs, m, h, draws, workers)
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
