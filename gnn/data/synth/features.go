package synth

import (
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// normal fills out with independent standard normal variates.
func normal(r *rng.Rand, out []float64) {
	for i := range out {
		out[i] = gauss(r)
	}
}

// centroids draws one standard normal centroid per class (classes × f).
func centroids(seed uint64, classes, f int) []float64 {
	mu := make([]float64, classes*f)
	normal(rng.New(seed, tagCentroids), mu)
	return mu
}

// features fills X (n × f, row-major) with class centroid plus noise·N(0, 1).
func features(seed uint64, labels []int32, f int, noise float64, workers int, rep *reporter) []float32 {
	n := len(labels)
	classes := int32(0)
	for _, c := range labels {
		classes = max(classes, c+1)
	}
	mu := centroids(seed, int(classes), f)
	x := make([]float32, n*f)
	rep.start("features", int64(n))
	const chunk = nodeChunk / 4
	chunks := (n + chunk - 1) / chunk
	parallelFor(workers, chunks, func(ch int) {
		r := rng.New(seed, tagFeatures, uint64(ch))
		z := make([]float64, f)
		lo, hi := ch*chunk, min((ch+1)*chunk, n)
		for v := lo; v < hi; v++ {
			normal(r, z)
			c := mu[int(labels[v])*f : int(labels[v]+1)*f]
			row := x[v*f : (v+1)*f]
			for j := range row {
				row[j] = float32(c[j] + noise*z[j])
			}
		}
		rep.add(int64(hi - lo))
	})
	rep.finish()
	return x
}
