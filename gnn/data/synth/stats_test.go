package synth

import (
	"math"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// edgeHomophily is the fraction of stored entries joining nodes of the same class.
func edgeHomophily(ds *data.Dataset) float64 {
	g := ds.Graph
	same := int64(0)
	for v := 0; v < g.N; v++ {
		for _, u := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
			if ds.Y[u] == ds.Y[v] {
				same++
			}
		}
	}
	return float64(same) / float64(max(g.NumEdges(), 1))
}

type degreeStats struct {
	mean     float64
	max      int
	median   int
	isolated int
}

func degrees(ds *data.Dataset) degreeStats {
	g := ds.Graph
	hist := map[int]int{}
	st := degreeStats{mean: float64(g.NumEdges()) / float64(g.N)}
	for v := 0; v < g.N; v++ {
		d := int(g.Indptr[v+1] - g.Indptr[v])
		hist[d]++
		st.max = max(st.max, d)
		if d == 0 {
			st.isolated++
		}
	}
	seen := 0
	for d := 0; d <= st.max; d++ {
		seen += hist[d]
		if seen*2 >= g.N {
			st.median = d
			break
		}
	}
	return st
}

// proxyAccuracy estimates how well a linear model does on the features alone
// and on [features, mean of neighbor features]: a nearest-class-mean rule with
// class priors and a pooled variance per block (linear discriminant analysis
// with isotropic blocks), fitted on train nodes and scored on test nodes
// (at most maxEval of each, spread over the lists).
func proxyAccuracy(ds *data.Dataset, maxEval int) (featOnly, withGraph float64) {
	f, k := ds.NumFeatures, ds.NumClasses
	g := ds.Graph
	agg := func(v int32, out []float64) {
		clear(out)
		nb := g.Indices[g.Indptr[v]:g.Indptr[v+1]]
		for _, u := range nb {
			for j, x := range ds.X[int(u)*f : int(u+1)*f] {
				out[j] += float64(x)
			}
		}
		if len(nb) > 0 {
			for j := range out {
				out[j] /= float64(len(nb))
			}
		}
	}
	pick := func(list []int32) []int32 {
		if len(list) <= maxEval {
			return list
		}
		out := make([]int32, maxEval)
		for i := range out {
			out[i] = list[int(int64(i)*int64(len(list))/int64(maxEval))]
		}
		return out
	}
	train, test := pick(ds.Split.Train), pick(ds.Split.Test)
	mx := make([]float64, k*f)
	ma := make([]float64, k*f)
	cnt := make([]float64, k)
	a := make([]float64, f)
	for _, v := range train {
		c := int(ds.Y[v])
		cnt[c]++
		agg(v, a)
		for j := 0; j < f; j++ {
			mx[c*f+j] += float64(ds.X[int(v)*f+j])
			ma[c*f+j] += a[j]
		}
	}
	for c := 0; c < k; c++ {
		for j := 0; j < f; j++ {
			if cnt[c] > 0 {
				mx[c*f+j] /= cnt[c]
				ma[c*f+j] /= cnt[c]
			}
		}
	}
	var vx, va float64
	for _, v := range train {
		c := int(ds.Y[v])
		agg(v, a)
		for j := 0; j < f; j++ {
			dx := float64(ds.X[int(v)*f+j]) - mx[c*f+j]
			da := a[j] - ma[c*f+j]
			vx += dx * dx
			va += da * da
		}
	}
	vx = max(vx/float64(len(train)*f), 1e-12)
	va = max(va/float64(len(train)*f), 1e-12)
	okX, okG := 0, 0
	for _, v := range test {
		agg(v, a)
		bestX, bestG := math.Inf(-1), math.Inf(-1)
		cx, cg := -1, -1
		for c := 0; c < k; c++ {
			if cnt[c] == 0 {
				continue
			}
			var sx, sa float64
			for j := 0; j < f; j++ {
				dx := float64(ds.X[int(v)*f+j]) - mx[c*f+j]
				da := a[j] - ma[c*f+j]
				sx += dx * dx
				sa += da * da
			}
			prior := math.Log(cnt[c])
			if s := prior - sx/(2*vx); s > bestX {
				bestX, cx = s, c
			}
			if s := prior - sx/(2*vx) - sa/(2*va); s > bestG {
				bestG, cg = s, c
			}
		}
		if int32(cx) == ds.Y[v] {
			okX++
		}
		if int32(cg) == ds.Y[v] {
			okG++
		}
	}
	return float64(okX) / float64(len(test)), float64(okG) / float64(len(test))
}
