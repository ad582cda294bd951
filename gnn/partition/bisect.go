package partition

import (
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// bisection is the state of a 2-way partition under refinement: id and ed
// are each vertex's edge weight to its own side and to the other side.
type bisection struct {
	g      *wgraph
	where  []int32
	id, ed []int64
	pw     [2]int64
	tpw    [2]int64 // target weights
	maxpw  [2]int64
	cut    int64
	q      [2]*pqueue
	locked []bool
	useQ   bool
}

func newBisection(g *wgraph, where []int32, frac, ub float64) *bisection {
	b := &bisection{g: g, where: where, id: make([]int64, g.n), ed: make([]int64, g.n),
		q: [2]*pqueue{newPQ(g.n), newPQ(g.n)}, locked: make([]bool, g.n)}
	b.tpw[0] = int64(frac * float64(g.tvwgt))
	b.tpw[1] = g.tvwgt - b.tpw[0]
	for s := 0; s < 2; s++ {
		b.maxpw[s] = int64(ub * float64(b.tpw[s]))
	}
	for v := 0; v < g.n; v++ {
		b.pw[where[v]] += int64(g.vwgt[v])
		for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
			if where[g.adjncy[j]] == where[v] {
				b.id[v] += int64(g.adjwgt[j])
			} else {
				b.ed[v] += int64(g.adjwgt[j])
			}
		}
		b.cut += b.ed[v]
	}
	b.cut /= 2
	return b
}

// move puts v on the other side and updates weights, degrees, the cut and,
// when useQ is set, the queue entries of v's unlocked neighbors.
func (b *bisection) move(v int32) {
	g := b.g
	from := b.where[v]
	to := 1 - from
	b.cut -= b.ed[v] - b.id[v]
	b.where[v] = to
	b.pw[from] -= int64(g.vwgt[v])
	b.pw[to] += int64(g.vwgt[v])
	b.id[v], b.ed[v] = b.ed[v], b.id[v]
	for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
		u := g.adjncy[j]
		w := int64(g.adjwgt[j])
		if b.where[u] == to {
			b.id[u] += w
			b.ed[u] -= w
		} else {
			b.id[u] -= w
			b.ed[u] += w
		}
		if !b.useQ || b.locked[u] {
			continue
		}
		q := b.q[b.where[u]]
		switch {
		case b.ed[u] > 0 && q.has(u):
			q.update(u, b.ed[u]-b.id[u])
		case b.ed[u] > 0:
			q.push(u, b.ed[u]-b.id[u])
		case q.has(u):
			q.remove(u)
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// balance moves vertices off an overweight side, best gain first, until
// both sides are within their maximum weights (if possible).
func (b *bisection) balance() {
	from := int32(-1)
	for s := int32(0); s < 2; s++ {
		if b.pw[s] > b.maxpw[s] {
			from = s
		}
	}
	if from < 0 {
		return
	}
	to := 1 - from
	g := b.g
	q := b.q[from]
	b.q[0].reset()
	b.q[1].reset()
	for v := int32(0); v < int32(g.n); v++ {
		if b.where[v] == from && b.ed[v] > 0 {
			q.push(v, b.ed[v]-b.id[v])
		}
	}
	if q.len() == 0 {
		for v := int32(0); v < int32(g.n); v++ {
			if b.where[v] == from {
				q.push(v, b.ed[v]-b.id[v])
			}
		}
	}
	b.useQ = true
	for b.pw[from] > b.maxpw[from] && q.len() > 0 {
		v := q.pop()
		if b.pw[to]+int64(g.vwgt[v]) > b.maxpw[to] {
			continue
		}
		b.move(v)
	}
	b.useQ = false
	b.q[0].reset()
	b.q[1].reset()
}

// fm runs up to niter Fiduccia-Mattheyses passes: boundary vertices move
// best gain first, always from the side further over its target, each at
// most once a pass; the pass is rolled back to its best cut whose balance
// is no worse than at the start (within about one average vertex).
func (b *bisection) fm(niter int, r *rng.Rand) {
	g := b.g
	n := g.n
	if n < 2 {
		return
	}
	limit := min(max(n/100, 15), 100)
	var moves []int32
	for it := 0; it < niter; it++ {
		b.q[0].reset()
		b.q[1].reset()
		for _, v := range r.Perm(n) {
			if b.ed[v] > 0 {
				b.q[b.where[v]].push(v, b.ed[v]-b.id[v])
			}
		}
		initcut := b.cut
		mincut := b.cut
		origdiff := abs64(b.tpw[0] - b.pw[0])
		mindiff := origdiff
		avgv := min((b.pw[0]+b.pw[1])/20, 2*g.tvwgt/int64(n))
		minIdx := -1
		moves = moves[:0]
		b.useQ = true
		for {
			from := int32(1)
			if b.tpw[0]-b.pw[0] < b.tpw[1]-b.pw[1] {
				from = 0
			}
			if b.q[from].len() == 0 {
				break
			}
			v := b.q[from].pop()
			b.locked[v] = true
			b.move(v)
			moves = append(moves, v)
			diff := abs64(b.tpw[0] - b.pw[0])
			if (b.cut < mincut && diff <= origdiff+avgv) || (b.cut == mincut && diff < mindiff) {
				mincut, mindiff, minIdx = b.cut, diff, len(moves)-1
			} else if len(moves)-1-minIdx > limit {
				break
			}
		}
		b.useQ = false
		for i := len(moves) - 1; i > minIdx; i-- {
			b.move(moves[i])
		}
		for _, v := range moves {
			b.locked[v] = false
		}
		if minIdx < 0 || b.cut >= initcut {
			break
		}
	}
	b.q[0].reset()
	b.q[1].reset()
}

// grow computes an initial bisection of a small graph: several tries of
// breadth-first growing of side 0 from a random vertex up to its target
// weight, each balanced and FM-refined; the best cut among balanced tries
// wins.
func grow(g *wgraph, frac, ub float64, tries int, r *rng.Rand) []int32 {
	var best []int32
	bestCut, bestBad := int64(-1), true
	tpw0 := int64(frac * float64(g.tvwgt))
	maxpw0 := int64(ub * float64(tpw0))
	for t := 0; t < tries; t++ {
		where := make([]int32, g.n)
		for i := range where {
			where[i] = 1
		}
		seen := make([]bool, g.n)
		queue := make([]int32, 0, g.n)
		var pw0 int64
		next := r.Intn(max(g.n, 1))
		for pw0 < tpw0 {
			if len(queue) == 0 {
				// Start (or restart, for a disconnected graph) at a random
				// unseen vertex.
				found := false
				for i := 0; i < g.n; i++ {
					v := (next + i) % g.n
					if !seen[v] {
						seen[v] = true
						queue = append(queue, int32(v))
						found = true
						break
					}
				}
				if !found {
					break
				}
				next = r.Intn(g.n)
			}
			v := queue[0]
			queue = queue[1:]
			if pw0+int64(g.vwgt[v]) > maxpw0 {
				continue
			}
			where[v] = 0
			pw0 += int64(g.vwgt[v])
			for j := g.xadj[v]; j < g.xadj[v+1]; j++ {
				if u := g.adjncy[j]; !seen[u] {
					seen[u] = true
					queue = append(queue, u)
				}
			}
		}
		b := newBisection(g, where, frac, ub)
		b.balance()
		b.fm(4, r)
		bad := b.pw[0] > b.maxpw[0] || b.pw[1] > b.maxpw[1]
		if best == nil || (bestBad && !bad) || (bad == bestBad && b.cut < bestCut) {
			best, bestCut, bestBad = b.where, b.cut, bad
		}
	}
	return best
}

// bisect splits g in two, side 0 with about frac of the vertex weight, by
// multilevel bisection: coarsen, grow, then balance and FM-refine at every
// level back up.
func bisect(g *wgraph, frac, ub float64, r *rng.Rand) []int32 {
	levels := coarsen(g, 20, r)
	where := grow(levels[len(levels)-1].g, frac, ub, 8, r)
	for l := len(levels) - 2; l >= 0; l-- {
		where = project(levels[l], where)
		b := newBisection(levels[l].g, where, frac, ub)
		b.balance()
		b.fm(10, r)
	}
	return where
}

// recursiveBisect partitions g into k parts (ids 0..k-1) by recursive
// multilevel bisection; ub is the imbalance allowed to each bisection.
func recursiveBisect(g *wgraph, k int, ub float64, r *rng.Rand) []int32 {
	where := make([]int32, g.n)
	if k <= 1 || g.n == 0 {
		return where
	}
	k1 := k / 2
	side := bisect(g, float64(k1)/float64(k), ub, r)
	local := make([]int32, g.n)
	for s, base := range [2]int{0, k1} {
		kk := k1
		if s == 1 {
			kk = k - k1
		}
		sg, ids := g.sub(side, int32(s), local)
		sub := recursiveBisect(sg, kk, ub, r)
		for i, v := range ids {
			where[v] = int32(base) + sub[i]
		}
	}
	return where
}
