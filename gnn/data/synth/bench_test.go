package synth

import (
	"testing"
)

// BenchmarkGenerateProducts generates the synth-products preset (2.45M
// nodes, ~61.9M edges). Benchmarks run only with -bench.
func BenchmarkGenerateProducts(b *testing.B) {
	p, _ := Lookup("synth-products")
	for b.Loop() {
		ds, err := Generate(p.Config, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ds.Graph.NumEdges()), "edges")
	}
}

// BenchmarkStagesProducts times the stages of synth-products separately.
func BenchmarkStagesProducts(b *testing.B) {
	p, _ := Lookup("synth-products")
	cfg := p.Config
	w := workerCount(0)
	rep := &reporter{}
	m := newModel(cfg, 1, w, rep)
	draws, _ := calibrate(m, cfg.AvgDegree*float64(cfg.Nodes)/2, w)
	src := make([]int32, draws)
	dst := make([]int32, draws)
	b.Run("model", func(b *testing.B) {
		for b.Loop() {
			newModel(cfg, 1, w, rep)
		}
	})
	b.Run("calibrate", func(b *testing.B) {
		for b.Loop() {
			calibrate(m, cfg.AvgDegree*float64(cfg.Nodes)/2, w)
		}
	})
	b.Run("edges", func(b *testing.B) {
		for b.Loop() {
			m.drawEdges(1, src, dst, w, rep)
		}
	})
	b.Run("csr", func(b *testing.B) {
		for b.Loop() {
			buildSymmetric(cfg.Nodes, src, dst, w, rep)
		}
	})
	b.Run("features", func(b *testing.B) {
		for b.Loop() {
			features(1, m.labels, cfg.Features, cfg.FeatureNoise, w, rep)
		}
	})
}
