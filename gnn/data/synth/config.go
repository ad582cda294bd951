package synth

import (
	"fmt"
	"math"
)

// Config describes a synthetic dataset. The zero value is not valid; start
// from a preset (Lookup) or fill every field that Validate checks.
type Config struct {
	// Name is written to Dataset.Name; empty gives "synth".
	Name string

	// Nodes is the number of nodes, in [1, 2^31-1).
	Nodes int

	// AvgDegree is the target mean number of stored entries per node in the
	// final graph: directed entries of the symmetric graph (every undirected
	// edge counts twice), after duplicates and self-loops are removed. The
	// generator calibrates the number of edge draws to reach it, typically to
	// within 0.5%, unless the model cannot hold that many distinct edges
	// (tiny classes with Homophily near 1). At most (Nodes-1)/2.
	AvgDegree float64

	// Features is the feature dimension (>= 1).
	Features int

	// Classes is the number of classes, in [1, Nodes]. Every class gets at
	// least one node.
	Classes int

	// ClassSkew is the Zipf exponent of the class sizes: the k-th largest
	// class gets a share proportional to k^-ClassSkew. 0 gives equal sizes;
	// about 1.2 gives the very unequal classes of ogbn-products. Class ids
	// are shuffled, so id 0 is not necessarily the largest. In [0, 10].
	ClassSkew float64

	// Homophily is the fraction of edges inside a class, in [0, 1]. An edge
	// draw stays inside its first end's class with probability close to
	// Homophily, otherwise its second end comes from the other classes only;
	// the draw probability is calibrated so that the measured fraction of
	// stored entries joining same-class nodes is Homophily to within about
	// 0.01 (duplicates and self-loops, which are dropped, are more frequent
	// inside classes). It cannot be reached when classes are too small to
	// hold that many edges (e.g. one node per class). With a single class
	// every edge is intra-class.
	Homophily float64

	// PowerLaw is the exponent γ of the degree distribution P(d) ~ d^-γ
	// (ogbn-products-like graphs: about 2.1 to 2.5). Degree propensities are
	// drawn from a Pareto law with tail index γ-1. 0 turns degree correction
	// off: every node has the same propensity and degrees are Poisson-like.
	// Otherwise in (1, 10]; values <= 2 need MaxDegreeFrac > 0.
	PowerLaw float64

	// MaxDegreeFrac caps a node's expected degree at MaxDegreeFrac*Nodes
	// (ogbn-products' largest degree is about 0.007*N). 0 means no cap.
	// In [0, 1]; when set, MaxDegreeFrac*Nodes must be at least AvgDegree.
	MaxDegreeFrac float64

	// FeatureNoise is the noise-to-signal ratio of the features: a node's
	// feature vector is its class centroid, whose coordinates are standard
	// normal, plus Gaussian noise with standard deviation FeatureNoise per
	// coordinate. Larger values make the features alone less predictive.
	// In [0, 1000].
	FeatureNoise float64

	// TrainFrac and ValidFrac are the fractions of nodes in the training and
	// validation parts of Dataset.Split; the remaining nodes are test nodes.
	// Both 0 leaves Dataset.Split nil. Each in [0, 1], sum at most 1.
	TrainFrac, ValidFrac float64

	// Workers is the number of goroutines; 0 uses GOMAXPROCS. It changes
	// only the speed, never the result.
	Workers int
}

// Validate reports the first problem that makes the configuration impossible
// to generate.
func (c Config) Validate() error {
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("synth: %s is %v, want a finite number", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"AvgDegree", c.AvgDegree}, {"ClassSkew", c.ClassSkew}, {"Homophily", c.Homophily},
		{"PowerLaw", c.PowerLaw}, {"MaxDegreeFrac", c.MaxDegreeFrac}, {"FeatureNoise", c.FeatureNoise},
		{"TrainFrac", c.TrainFrac}, {"ValidFrac", c.ValidFrac},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case c.Nodes < 1:
		return fmt.Errorf("synth: %d nodes, want at least 1", c.Nodes)
	case c.Nodes >= math.MaxInt32:
		return fmt.Errorf("synth: %d nodes, want fewer than %d (node ids are int32)", c.Nodes, math.MaxInt32)
	case c.AvgDegree < 0:
		return fmt.Errorf("synth: average degree %g is negative", c.AvgDegree)
	case c.AvgDegree > float64(c.Nodes-1)/2:
		return fmt.Errorf("synth: average degree %g too large for %d nodes (at most (nodes-1)/2 = %g)", c.AvgDegree, c.Nodes, float64(c.Nodes-1)/2)
	case c.AvgDegree*float64(c.Nodes) > 1<<34:
		return fmt.Errorf("synth: %g nodes × average degree %g is too many edges", float64(c.Nodes), c.AvgDegree)
	case c.Features < 1:
		return fmt.Errorf("synth: %d features, want at least 1", c.Features)
	case float64(c.Features)*float64(c.Nodes) > 1<<40:
		return fmt.Errorf("synth: %d nodes × %d features is too large", c.Nodes, c.Features)
	case c.Classes < 1:
		return fmt.Errorf("synth: %d classes, want at least 1", c.Classes)
	case c.Classes > c.Nodes:
		return fmt.Errorf("synth: %d classes but only %d nodes (every class needs a node)", c.Classes, c.Nodes)
	case c.ClassSkew < 0 || c.ClassSkew > 10:
		return fmt.Errorf("synth: class skew %g outside [0, 10]", c.ClassSkew)
	case c.Homophily < 0 || c.Homophily > 1:
		return fmt.Errorf("synth: homophily %g outside [0, 1]", c.Homophily)
	case c.PowerLaw != 0 && (c.PowerLaw <= 1 || c.PowerLaw > 10):
		return fmt.Errorf("synth: power-law exponent %g outside (1, 10] (0 turns degree correction off)", c.PowerLaw)
	case c.MaxDegreeFrac < 0 || c.MaxDegreeFrac > 1:
		return fmt.Errorf("synth: max degree fraction %g outside [0, 1]", c.MaxDegreeFrac)
	case c.PowerLaw != 0 && c.PowerLaw <= 2 && c.MaxDegreeFrac == 0:
		return fmt.Errorf("synth: power-law exponent %g <= 2 has an unbounded mean; set MaxDegreeFrac to cap degrees", c.PowerLaw)
	case c.MaxDegreeFrac > 0 && c.MaxDegreeFrac*float64(c.Nodes) < c.AvgDegree:
		return fmt.Errorf("synth: degree cap %g×%d = %g is below the average degree %g", c.MaxDegreeFrac, c.Nodes, c.MaxDegreeFrac*float64(c.Nodes), c.AvgDegree)
	case c.FeatureNoise < 0 || c.FeatureNoise > 1000:
		return fmt.Errorf("synth: feature noise %g outside [0, 1000]", c.FeatureNoise)
	case c.TrainFrac < 0 || c.TrainFrac > 1:
		return fmt.Errorf("synth: train fraction %g outside [0, 1]", c.TrainFrac)
	case c.ValidFrac < 0 || c.ValidFrac > 1:
		return fmt.Errorf("synth: validation fraction %g outside [0, 1]", c.ValidFrac)
	case c.TrainFrac+c.ValidFrac > 1+1e-9:
		return fmt.Errorf("synth: train fraction %g + validation fraction %g exceed 1", c.TrainFrac, c.ValidFrac)
	case c.Workers < 0:
		return fmt.Errorf("synth: %d workers, want 0 (GOMAXPROCS) or more", c.Workers)
	}
	return nil
}
