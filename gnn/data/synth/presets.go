package synth

// Preset is a named, ready-made configuration.
type Preset struct {
	Name, Description string
	Config            Config
}

// ogbn-products has 2,449,029 nodes and 61,859,140 stored (directed) edges.
const (
	productsNodes = 2449029
	productsEdges = 61859140
)

// Presets returns the built-in configurations, smallest first. The slice is a
// fresh copy that callers may modify.
func Presets() []Preset {
	return []Preset{
		{
			Name:        "synth-tiny",
			Description: "10k nodes, ~200k edges, 32 features, 8 classes; for tests and quick runs",
			Config: Config{
				Name: "synth-tiny", Nodes: 10000, AvgDegree: 20, Features: 32, Classes: 8,
				ClassSkew: 0.8, Homophily: 0.5, PowerLaw: 2.3, MaxDegreeFrac: 0.05, FeatureNoise: 3.5,
				TrainFrac: 0.1, ValidFrac: 0.1,
			},
		},
		{
			Name:        "synth-small",
			Description: "100k nodes, ~2M edges, 64 features, 16 classes",
			Config: Config{
				Name: "synth-small", Nodes: 100000, AvgDegree: 20, Features: 64, Classes: 16,
				ClassSkew: 1.0, Homophily: 0.45, PowerLaw: 2.3, MaxDegreeFrac: 0.02, FeatureNoise: 4.5,
				TrainFrac: 0.1, ValidFrac: 0.1,
			},
		},
		{
			Name:        "synth-medium",
			Description: "1M nodes, ~20M edges, 100 features, 32 classes",
			Config: Config{
				Name: "synth-medium", Nodes: 1000000, AvgDegree: 20, Features: 100, Classes: 32,
				ClassSkew: 1.1, Homophily: 0.45, PowerLaw: 2.2, MaxDegreeFrac: 0.01, FeatureNoise: 5.2,
				TrainFrac: 0.1, ValidFrac: 0.1,
			},
		},
		{
			Name:        "synth-products",
			Description: "ogbn-products scale: 2,449,029 nodes, ~61.9M edges, 100 features, 47 unequal classes, power-law degrees, 8/2/90 split",
			Config: Config{
				Name: "synth-products", Nodes: productsNodes, AvgDegree: float64(productsEdges) / productsNodes,
				Features: 100, Classes: 47,
				ClassSkew: 1.2, Homophily: 0.45, PowerLaw: 2.1, MaxDegreeFrac: 0.007, FeatureNoise: 5,
				TrainFrac: 0.08, ValidFrac: 0.02,
			},
		},
	}
}

// Lookup returns the preset with the given name.
func Lookup(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
