package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/partition"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile/units"
)

// gasMargin is the safety factor on a GAS batch's estimated bytes
// (gasNeed): the estimate leaves out what the optimizer and the loss
// hold, so it is taken a quarter larger.
const gasMargin = 1.25

// gasNeed estimates the device bytes of a GAS batch of n nodes (in-batch
// and halo): their input features, and per layer an activation and its
// gradient as wide as the larger of the hidden width and the classes,
// with gasMargin. On synth-small (64 features, 2 layers of 64) the
// estimate without margin is within 3 % of the measured peak of a batch
// of 8 of 32 parts (108 MiB).
func gasNeed(n int, cfg Config, features, classes int) int64 {
	per := features + 2*cfg.Layers*max(cfg.Hidden, classes)
	return int64(gasMargin * float64(4*int64(n)*int64(per)))
}

// gasLoader partitions g into parts (balanced as balance says) and
// builds the GAS loader over them.
func gasLoader(g *graph.CSR, parts int, seed uint64, balance PartBalance) (*sample.GAS, error) {
	if parts > g.N {
		return nil, fmt.Errorf("%d parts for %d nodes: at most one part per node", parts, g.N)
	}
	opt := partition.Options{Seed: seed}
	if balance == PartBalanceEdges {
		opt.VertexWeights = partition.DegreeWeights(g)
	}
	pr, err := partition.KWay(g, parts, opt)
	if err != nil {
		return nil, err
	}
	return sample.NewGAS(g, pr.Parts, parts)
}

// gasFit is what fitGASParts reads: the run's config (whose
// PartsPerBatch it lowers), the graph, the memory accounting and the
// feature and class counts.
type gasFit struct {
	cfg               *Config
	g                 *graph.CSR
	mem               *memState
	features, classes int
}

// need is gasNeed for this run.
func (f gasFit) need(nodes int) int64 { return gasNeed(nodes, *f.cfg, f.features, f.classes) }

// fitGASParts sizes a GAS run's parts per batch to its memory budget, as
// the memory guard and planBudget fit the other samplers: it builds the
// loader (kept for the schedule), and lowers PartsPerBatch until the
// largest batch of the first epoch is estimated (gasNeed) to fit in what
// the budget leaves beside the model and the data held on the device. It
// returns the loader (nil when it built none) and the line for
// run_start's adjusted ("" when nothing changed). At one part per batch
// it keeps 1 and says that even that may not fit.
func fitGASParts(f gasFit) (*sample.GAS, string, error) {
	cfg := f.cfg
	if cfg.Sampler != SamplerGAS || f.mem.budget <= 0 {
		return nil, "", nil
	}
	loader, err := gasLoader(f.g, cfg.Parts, cfg.Seed, cfg.PartBalance)
	if err != nil {
		return nil, "", fmt.Errorf("gas setup: %w", err)
	}
	room := f.mem.budget - f.mem.evalResident(*cfg)
	budget := units.FormatSize(f.mem.budget)
	from := cfg.PartsPerBatch
	var need int64
	for ppb := from; ppb >= 1; ppb-- {
		nodes, err := largestGASBatch(loader, ppb, *cfg)
		if err != nil {
			return nil, "", fmt.Errorf("gas setup: %w", err)
		}
		if need = f.need(nodes); need <= room {
			if ppb == from {
				return loader, "", nil
			}
			first, _ := largestGASBatch(loader, from, *cfg)
			cfg.PartsPerBatch = ppb
			return loader, fmt.Sprintf("parts_per_batch %d->%d: a batch of %d parts needs about %s, more than the %s the memory budget %s leaves beside the model; the largest of %d parts about %s",
				from, ppb, from, units.FormatSize(f.need(first)), units.FormatSize(room), budget, ppb, units.FormatSize(need)), nil
		}
	}
	cfg.PartsPerBatch = 1
	if from == 1 {
		return loader, fmt.Sprintf("parts_per_batch 1: even a batch of one part needs about %s, more than the %s the memory budget %s leaves beside the model",
			units.FormatSize(need), units.FormatSize(room), budget), nil
	}
	return loader, fmt.Sprintf("parts_per_batch %d->1: even a batch of one part needs about %s, more than the %s the memory budget %s leaves beside the model",
		from, units.FormatSize(need), units.FormatSize(room), budget), nil
}

// largestGASBatch returns the node count (in-batch and halo) of the
// largest batch of the first epoch with ppb parts per batch.
func largestGASBatch(loader *sample.GAS, ppb int, cfg Config) (int, error) {
	groups, err := loader.Batches(1, ppb, cfg.Seed)
	if err != nil {
		return 0, err
	}
	most := 0
	for i, parts := range groups {
		b, err := loader.Batch(1, i, parts, cfg.Layers)
		if err != nil {
			return 0, err
		}
		most = max(most, len(b.Nodes))
	}
	return most, nil
}
