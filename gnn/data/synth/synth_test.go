package synth

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// testConfig is a small, fast configuration with every feature switched on.
func testConfig() Config {
	return Config{
		Name: "test", Nodes: 6000, AvgDegree: 16, Features: 16, Classes: 6,
		ClassSkew: 1, Homophily: 0.7, PowerLaw: 2.2, MaxDegreeFrac: 0.05, FeatureNoise: 3,
		TrainFrac: 0.1, ValidFrac: 0.1,
	}
}

func generate(t *testing.T, cfg Config, seed uint64) *data.Dataset {
	t.Helper()
	ds, err := Generate(cfg, seed, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if err := ds.Validate(); err != nil {
		t.Fatalf("generated dataset does not validate: %v", err)
	}
	return ds
}

func equalDatasets(a, b *data.Dataset) bool {
	eqF := slices.EqualFunc(a.X, b.X, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	eqS := (a.Split == nil) == (b.Split == nil)
	if eqS && a.Split != nil {
		eqS = slices.Equal(a.Split.Train, b.Split.Train) && slices.Equal(a.Split.Valid, b.Split.Valid) && slices.Equal(a.Split.Test, b.Split.Test)
	}
	return a.Name == b.Name && a.NumFeatures == b.NumFeatures && a.NumClasses == b.NumClasses &&
		a.Graph.N == b.Graph.N && slices.Equal(a.Graph.Indptr, b.Graph.Indptr) && slices.Equal(a.Graph.Indices, b.Graph.Indices) &&
		slices.Equal(a.Y, b.Y) && eqF && eqS
}

func TestPresets(t *testing.T) {
	ps := Presets()
	want := []string{"synth-tiny", "synth-small", "synth-medium", "synth-products"}
	if len(ps) != len(want) {
		t.Fatalf("%d presets, want %d", len(ps), len(want))
	}
	for i, p := range ps {
		if p.Name != want[i] || p.Config.Name != p.Name || p.Description == "" {
			t.Errorf("preset %d: name %q (config %q), description %q", i, p.Name, p.Config.Name, p.Description)
		}
		if err := p.Config.Validate(); err != nil {
			t.Errorf("preset %s does not validate: %v", p.Name, err)
		}
		q, ok := Lookup(p.Name)
		if !ok || q.Config != p.Config {
			t.Errorf("Lookup(%q) = %+v, %v", p.Name, q, ok)
		}
	}
	if _, ok := Lookup("synth-nope"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	prod, _ := Lookup("synth-products")
	if c := prod.Config; c.Nodes != 2449029 || c.Features != 100 || c.Classes != 47 ||
		math.Abs(c.AvgDegree*float64(c.Nodes)-61859140) > 1 {
		t.Errorf("synth-products does not have ogbn-products' size: %+v", c)
	}
	// Presets returns a fresh copy.
	ps[0].Config.Nodes = 1
	if q, _ := Lookup("synth-tiny"); q.Config.Nodes == 1 {
		t.Error("modifying the result of Presets changed the presets")
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no nodes", func(c *Config) { c.Nodes = 0 }, "nodes"},
		{"too many classes", func(c *Config) { c.Classes = c.Nodes + 1 }, "classes"},
		{"no classes", func(c *Config) { c.Classes = 0 }, "classes"},
		{"no features", func(c *Config) { c.Features = 0 }, "features"},
		{"homophily above 1", func(c *Config) { c.Homophily = 1.5 }, "homophily"},
		{"homophily negative", func(c *Config) { c.Homophily = -0.1 }, "homophily"},
		{"homophily NaN", func(c *Config) { c.Homophily = math.NaN() }, "Homophily"},
		{"negative degree", func(c *Config) { c.AvgDegree = -1 }, "degree"},
		{"degree too large", func(c *Config) { c.AvgDegree = float64(c.Nodes) }, "too large"},
		{"power law 1", func(c *Config) { c.PowerLaw = 1 }, "power-law"},
		{"heavy law without cap", func(c *Config) { c.PowerLaw, c.MaxDegreeFrac = 2, 0 }, "MaxDegreeFrac"},
		{"cap below mean", func(c *Config) { c.MaxDegreeFrac = 1e-4 }, "cap"},
		{"cap above 1", func(c *Config) { c.MaxDegreeFrac = 2 }, "max degree"},
		{"negative noise", func(c *Config) { c.FeatureNoise = -1 }, "noise"},
		{"skew", func(c *Config) { c.ClassSkew = -1 }, "skew"},
		{"split over 1", func(c *Config) { c.TrainFrac, c.ValidFrac = 0.7, 0.5 }, "exceed"},
		{"negative train", func(c *Config) { c.TrainFrac = -0.1 }, "train"},
		{"negative workers", func(c *Config) { c.Workers = -1 }, "workers"},
	}
	for _, tc := range cases {
		c := testConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
		if _, gerr := Generate(c, 1, nil); gerr == nil {
			t.Errorf("%s: Generate accepted an invalid config", tc.name)
		}
	}
	if err := testConfig().Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
}

func TestDeterminism(t *testing.T) {
	cfg := testConfig()
	base := generate(t, cfg, 42)
	for _, w := range []int{1, 2, 3, 8} {
		c := cfg
		c.Workers = w
		if !equalDatasets(base, generate(t, c, 42)) {
			t.Errorf("Workers=%d gives a different dataset", w)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	one := generate(t, cfg, 42)
	runtime.GOMAXPROCS(2)
	two := generate(t, cfg, 42)
	runtime.GOMAXPROCS(prev)
	if !equalDatasets(base, one) || !equalDatasets(base, two) {
		t.Error("GOMAXPROCS changes the dataset")
	}
	if !equalDatasets(base, generate(t, cfg, 42)) {
		t.Error("two generations with the same seed differ")
	}
	if equalDatasets(base, generate(t, cfg, 43)) {
		t.Error("seeds 42 and 43 give the same dataset")
	}
}

func TestGraphStructure(t *testing.T) {
	cfg := testConfig()
	ds := generate(t, cfg, 7)
	g := ds.Graph
	if g.N != cfg.Nodes || ds.Name != "test" || ds.NumFeatures != cfg.Features || ds.NumClasses != cfg.Classes {
		t.Fatalf("shape: N %d name %q features %d classes %d", g.N, ds.Name, ds.NumFeatures, ds.NumClasses)
	}
	for v := 0; v < g.N; v++ {
		row := g.Neighbors(int32(v))
		for i, u := range row {
			if u == int32(v) {
				t.Fatalf("self-loop at node %d", v)
			}
			if i > 0 && row[i-1] >= u {
				t.Fatalf("row %d not strictly increasing: %v", v, row)
			}
			if _, ok := slices.BinarySearch(g.Neighbors(u), int32(v)); !ok {
				t.Fatalf("edge %d -> %d has no reverse", v, u)
			}
		}
	}
	target := cfg.AvgDegree * float64(cfg.Nodes)
	if got := float64(g.NumEdges()); math.Abs(got-target) > 0.02*target {
		t.Errorf("%v stored edges, want about %v", got, target)
	}
	sizes := make([]int, cfg.Classes)
	for _, y := range ds.Y {
		sizes[y]++
	}
	if slices.Min(sizes) == 0 {
		t.Errorf("empty class: sizes %v", sizes)
	}
	if slices.Max(sizes) < 3*slices.Min(sizes) {
		t.Errorf("class sizes %v not skewed (ClassSkew %g)", sizes, cfg.ClassSkew)
	}
	s := ds.Split
	if s == nil {
		t.Fatal("no split")
	}
	if len(s.Train) != 600 || len(s.Valid) != 600 || len(s.Test) != 4800 {
		t.Errorf("split sizes %d/%d/%d, want 600/600/4800", len(s.Train), len(s.Valid), len(s.Test))
	}
	all := slices.Concat(s.Train, s.Valid, s.Test)
	slices.Sort(all)
	for i, v := range all {
		if v != int32(i) {
			t.Fatalf("split does not partition the nodes (position %d holds %d)", i, v)
		}
	}
	c := cfg
	c.TrainFrac, c.ValidFrac = 0, 0
	if ds := generate(t, c, 7); ds.Split != nil {
		t.Error("zero fractions should leave Split nil")
	}
}

func TestHomophily(t *testing.T) {
	for _, h := range []float64{0, 0.3, 0.7, 0.95, 1} {
		cfg := testConfig()
		cfg.Homophily = h
		ds := generate(t, cfg, 3)
		if got := edgeHomophily(ds); math.Abs(got-h) > 0.02 {
			t.Errorf("Homophily %g: measured %.3f", h, got)
		}
	}
}

func TestDegreeDistribution(t *testing.T) {
	cfg := testConfig()
	cfg.Nodes, cfg.AvgDegree = 20000, 10
	st := degrees(generate(t, cfg, 5))
	if float64(st.max) < 15*st.mean || float64(st.median) >= st.mean {
		t.Errorf("power law: mean %.1f median %d max %d, want a heavy right tail", st.mean, st.median, st.max)
	}
	if cap := cfg.MaxDegreeFrac * float64(cfg.Nodes); float64(st.max) > 1.5*cap {
		t.Errorf("max degree %d far above the cap %g", st.max, cap)
	}
	cfg.PowerLaw = 0
	st = degrees(generate(t, cfg, 5))
	if float64(st.max) > 3*st.mean {
		t.Errorf("no degree correction: mean %.1f max %d, want Poisson-like", st.mean, st.max)
	}
}

func TestFeaturesCarryClass(t *testing.T) {
	cfg := testConfig()
	ds := generate(t, cfg, 11)
	featOnly, withGraph := proxyAccuracy(ds, 5000)
	// Largest class share: what predicting the majority gives.
	sizes := make([]int, cfg.Classes)
	for _, y := range ds.Y {
		sizes[y]++
	}
	majority := float64(slices.Max(sizes)) / float64(cfg.Nodes)
	if featOnly < majority+0.1 {
		t.Errorf("features alone: accuracy %.3f, barely above the majority rate %.3f", featOnly, majority)
	}
	if withGraph < featOnly+0.1 {
		t.Errorf("features + neighbors %.3f not clearly above features alone %.3f", withGraph, featOnly)
	}
	if featOnly > 0.95 {
		t.Errorf("features alone already give %.3f: the task is trivial", featOnly)
	}
	// No noise: features identify the class exactly.
	cfg.FeatureNoise = 0
	if f, _ := proxyAccuracy(generate(t, cfg, 11), 5000); f != 1 {
		t.Errorf("noise-free features: accuracy %.3f, want 1", f)
	}
}

func TestEdgeCases(t *testing.T) {
	for _, c := range []Config{
		{Nodes: 1, Features: 1, Classes: 1},
		{Nodes: 2, AvgDegree: 0.5, Features: 2, Classes: 2, Homophily: 1},
		{Nodes: 50, AvgDegree: 4, Features: 3, Classes: 50, Homophily: 0.9, PowerLaw: 2.5, TrainFrac: 1},
		{Nodes: 300, AvgDegree: 6, Features: 4, Classes: 1, Homophily: 0.2, PowerLaw: 3},
		{Nodes: 1000, AvgDegree: 400, Features: 2, Classes: 4, Homophily: 0.5},
		{Nodes: 1000, AvgDegree: 30, Features: 2, Classes: 100, ClassSkew: 3, Homophily: 1, PowerLaw: 1.5, MaxDegreeFrac: 0.5},
	} {
		ds := generate(t, c, 1)
		if ds.Name != "synth" {
			t.Errorf("default name %q", ds.Name)
		}
		if c.Classes == 1 && edgeHomophily(ds) != 1 && ds.Graph.NumEdges() > 0 {
			t.Errorf("single class: homophily %g", edgeHomophily(ds))
		}
	}
}

func TestProgress(t *testing.T) {
	var stages []string
	last := map[string]float64{}
	_, err := Generate(testConfig(), 1, func(stage string, frac float64) {
		if len(stages) == 0 || stages[len(stages)-1] != stage {
			stages = append(stages, stage)
		}
		if frac < last[stage] || frac > 1 {
			t.Errorf("stage %s: fraction %g after %g", stage, frac, last[stage])
		}
		last[stage] = frac
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"degrees", "edges", "csr", "features"}; !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
	for s, f := range last {
		if f != 1 {
			t.Errorf("stage %s ended at %g", s, f)
		}
	}
}
