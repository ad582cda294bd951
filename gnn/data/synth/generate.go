package synth

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// Generate builds the dataset described by cfg from seed. The same cfg (up
// to Workers) and seed give a bit-identical dataset. progress, when not nil,
// is called with the stages "degrees", "edges", "csr" and "features" and the
// fraction of that stage done; calls are never concurrent.
func Generate(cfg Config, seed uint64, progress func(stage string, frac float64)) (*data.Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("synth: not implemented yet")
}
