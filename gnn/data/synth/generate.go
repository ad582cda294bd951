package synth

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Generate builds the dataset described by cfg from seed. The same cfg (up
// to Workers) and seed give a bit-identical dataset. progress, when not nil,
// is called with the stages "degrees", "edges", "csr" and "features", in that
// order, and the fraction of the stage done (ending with 1); calls are never
// concurrent but may come from worker goroutines, which wait for the
// callback, so it should return quickly.
func Generate(cfg Config, seed uint64, progress func(stage string, frac float64)) (*data.Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	workers := workerCount(cfg.Workers)
	rep := &reporter{fn: progress}

	m := newModel(cfg, seed, workers, rep)
	target := cfg.AvgDegree * float64(cfg.Nodes) / 2 // distinct undirected edges
	draws, h := calibrate(m, target, workers)
	m.h = h
	if draws > math.MaxInt32*4 {
		return nil, fmt.Errorf("synth: %d edge draws needed, too many", draws)
	}
	rep.finish()

	rep.start("edges", draws)
	src := make([]int32, draws)
	dst := make([]int32, draws)
	m.drawEdges(seed, src, dst, workers, rep)
	rep.finish()

	g := buildSymmetric(cfg.Nodes, src, dst, workers, rep)
	src, dst = nil, nil

	x := features(seed, m.labels, cfg.Features, cfg.FeatureNoise, workers, rep)

	name := cfg.Name
	if name == "" {
		name = "synth"
	}
	ds := &data.Dataset{
		Name:        name,
		Graph:       g,
		X:           x,
		NumFeatures: cfg.Features,
		Y:           m.labels,
		NumClasses:  cfg.Classes,
		Split:       split(cfg, seed),
	}
	return ds, nil
}

// split assigns round(TrainFrac·N) training and round(ValidFrac·N)
// validation nodes uniformly at random (selection sampling, so every list
// comes out sorted); the rest are test nodes. nil when both fractions are 0.
func split(cfg Config, seed uint64) *data.Split {
	if cfg.TrainFrac == 0 && cfg.ValidFrac == 0 {
		return nil
	}
	n := cfg.Nodes
	nTrain := min(n, int(math.Round(cfg.TrainFrac*float64(n))))
	nValid := min(n-nTrain, int(math.Round(cfg.ValidFrac*float64(n))))
	nTest := n - nTrain - nValid
	s := &data.Split{
		Train: make([]int32, 0, nTrain),
		Valid: make([]int32, 0, nValid),
		Test:  make([]int32, 0, nTest),
	}
	r := rng.New(seed, tagSplit)
	for v := 0; v < n; v++ {
		left := n - v
		k := r.Intn(left)
		switch {
		case k < nTrain-len(s.Train):
			s.Train = append(s.Train, int32(v))
		case k < nTrain-len(s.Train)+nValid-len(s.Valid):
			s.Valid = append(s.Valid, int32(v))
		default:
			s.Test = append(s.Test, int32(v))
		}
	}
	return s
}
