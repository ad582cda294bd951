package train

import (
	"fmt"

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

// gasLoader partitions the graph and builds the GAS loader.
func gasLoader(t *trainer) (*sample.GAS, error) {
	g := t.ds.Graph
	k := t.cfg.Parts
	if k > g.N {
		return nil, fmt.Errorf("%d parts for %d nodes: at most one part per node", k, g.N)
	}
	opt := partition.Options{Seed: t.cfg.Seed}
	if t.cfg.PartBalance == PartBalanceEdges {
		opt.VertexWeights = partition.DegreeWeights(g)
	}
	pr, err := partition.KWay(g, k, opt)
	if err != nil {
		return nil, err
	}
	return sample.NewGAS(g, pr.Parts, k)
}

// fitGASParts sizes a GAS run's parts per batch to its memory budget, as
// the memory guard and planBudget fit the other samplers: it builds the
// loader (kept for the schedule), and lowers PartsPerBatch until the
// largest batch of the first epoch is estimated (gasNeed) to fit in what
// the budget leaves beside the model and the data held on the device. It
// returns the line for run_start's adjusted ("" when nothing changed).
// At one part per batch it keeps 1 and says that even that may not fit.
func fitGASParts(t *trainer) (string, error) {
	if t.cfg.Sampler != SamplerGAS || t.mem.budget <= 0 {
		return "", nil
	}
	loader, err := gasLoader(t)
	if err != nil {
		return "", fmt.Errorf("gas setup: %w", err)
	}
	t.gas = loader
	room := t.mem.budget - t.mem.evalResident(t.cfg)
	from := t.cfg.PartsPerBatch
	var need int64
	for ppb := from; ppb >= 1; ppb-- {
		nodes, err := largestGASBatch(loader, ppb, t.cfg)
		if err != nil {
			return "", fmt.Errorf("gas setup: %w", err)
		}
		need = gasNeed(nodes, t.cfg, t.ds.NumFeatures, t.ds.NumClasses)
		if need <= room {
			if ppb == from {
				return "", nil
			}
			t.cfg.PartsPerBatch = ppb
			return fmt.Sprintf("parts_per_batch %d->%d: a batch of %d parts needs about %s, more than the %s the memory budget %s leaves beside the model; the largest of %d parts about %s",
				from, ppb, from, units.FormatSize(firstNeed(loader, from, t)), units.FormatSize(room), units.FormatSize(t.mem.budget), ppb, units.FormatSize(need)), nil
		}
	}
	t.cfg.PartsPerBatch = 1
	if from == 1 {
		return fmt.Sprintf("parts_per_batch 1: even a batch of one part needs about %s, more than the %s the memory budget %s leaves beside the model",
			units.FormatSize(need), units.FormatSize(room), units.FormatSize(t.mem.budget)), nil
	}
	return fmt.Sprintf("parts_per_batch %d->1: even a batch of one part needs about %s, more than the %s the memory budget %s leaves beside the model",
		from, units.FormatSize(need), units.FormatSize(room), units.FormatSize(t.mem.budget)), nil
}

// firstNeed is gasNeed of the largest first-epoch batch of ppb parts (0
// when it cannot be built: the line then says less).
func firstNeed(loader *sample.GAS, ppb int, t *trainer) int64 {
	n, err := largestGASBatch(loader, ppb, t.cfg)
	if err != nil {
		return 0
	}
	return gasNeed(n, t.cfg, t.ds.NumFeatures, t.ds.NumClasses)
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
