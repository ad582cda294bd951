package analysis

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// DefaultTargetShare is the default accuracy target's share of the best
// validation accuracy the baseline reached.
const DefaultTargetShare = 0.99

// TTA is time to accuracy over a session's runs: a target validation
// accuracy and, per run, when it first reached it.
type TTA struct {
	Target float64 `json:"target"`
	// TargetFrom says where the target came from: "given", or
	// "99 % of the baseline's best (RUN: 0.8123)" (with repeats, the
	// median of the baseline variant's runs' bests).
	TargetFrom string   `json:"target_from"`
	Baseline   string   `json:"baseline,omitempty"`
	Runs       []RunTTA `json:"runs"`
}

// RunTTA is one run's time to accuracy. A run that never reached the
// target has Reached false and is not ranked; a run that stopped early
// (failed, oom, crashed, canceled) says so in Status, and counts as
// reached only if it reached the target before it stopped.
type RunTTA struct {
	Run     string         `json:"run"`
	Status  profile.Status `json:"status,omitempty"`
	Best    float64        `json:"best_val_acc"`
	Reached bool           `json:"reached"`
	TimeS   float64        `json:"time_s,omitempty"` // from the first touch of data, evaluation included
	Epoch   int            `json:"epoch,omitempty"`  // the epoch that reached it (1 = the first)
	// Speedup is the baseline's time to accuracy over this run's (0 when
	// either did not reach it); EpochsSpeedup the same over epochs, the
	// baseline's epochs to the target over this run's (below 1 when a run
	// needs more epochs, as GAS and inference cutting may); EpochSpeedup
	// the baseline's median epoch time over this run's.
	Speedup       float64 `json:"speedup,omitempty"`
	EpochsSpeedup float64 `json:"epochs_speedup,omitempty"`
	EpochSpeedup  float64 `json:"epoch_speedup,omitempty"`
	Rank          int     `json:"rank,omitempty"` // 1 = fastest to the target; 0: not ranked
	Evaluated     int     `json:"evaluated"`      // evaluated epochs
}

// sortCurve orders a curve by epoch.
func sortCurve(c []AccPoint) {
	slices.SortFunc(c, func(a, b AccPoint) int { return cmp.Compare(a.Epoch, b.Epoch) })
}

// best returns a curve's best validation accuracy (0 for none).
func best(c []AccPoint) float64 {
	var b float64
	for _, p := range c {
		b = max(b, p.ValAcc)
	}
	return b
}

// BaselineIndex returns the index of the baseline among runs: the run
// named name if given, else the first of variant baseline, else 0; -1
// without runs or when name matches none.
func BaselineIndex(runs []*Run, name string) int {
	if len(runs) == 0 {
		return -1
	}
	for i, r := range runs {
		if name != "" && r.Name == name {
			return i
		}
	}
	if name != "" {
		return -1
	}
	for i, r := range runs {
		if r.Variant == profile.VariantBaseline {
			return i
		}
	}
	return 0
}

// TimeToAccuracy computes time to accuracy over runs against target
// (a validation accuracy), or, with target 0, DefaultTargetShare of the
// best validation accuracy the baseline (runs[base]) reached.
func TimeToAccuracy(runs []*Run, base int, target float64) TTA {
	var t TTA
	if base >= 0 && base < len(runs) {
		t.Baseline = runs[base].Name
	}
	peers := baselinePeers(runs, base)
	if target > 0 {
		t.Target, t.TargetFrom = target, "given"
	} else if len(peers) == 1 {
		b := best(runs[base].Curve)
		t.Target = DefaultTargetShare * b
		t.TargetFrom = "99 % of the baseline's best (" + t.Baseline + ": " + fmtAcc(b) + ")"
	} else if len(peers) > 1 {
		v := make([]float64, len(peers))
		for i, k := range peers {
			v[i] = best(runs[k].Curve)
		}
		b := median(v)
		t.Target = DefaultTargetShare * b
		t.TargetFrom = fmt.Sprintf("99 %% of the baseline's best, the median over its %d repeats (%s: %s)", len(peers), runs[base].Variant, fmtAcc(b))
	}
	for _, r := range runs {
		rt := RunTTA{Run: r.Name, Status: r.Status, Best: best(r.Curve), Evaluated: len(r.Curve)}
		if t.Target > 0 {
			for _, p := range r.Curve {
				if p.ValAcc >= t.Target {
					rt.Reached, rt.TimeS, rt.Epoch = true, p.TimeS, p.Epoch
					break
				}
			}
		}
		t.Runs = append(t.Runs, rt)
	}
	t.rank(runs, peers)
	return t
}

// baselinePeers returns the indexes of the baseline's repeats: the runs
// of its variant, or the baseline alone.
func baselinePeers(runs []*Run, base int) []int {
	if base < 0 || base >= len(runs) {
		return nil
	}
	v := runs[base].Variant
	if v == "" {
		return []int{base}
	}
	var out []int
	for i, r := range runs {
		if r.Variant == v {
			out = append(out, i)
		}
	}
	return out
}

// rank fills the speedups and the ranks of the runs that reached the
// target. The baseline's time and epochs to accuracy and its epoch time
// are the medians over its repeats (peers), of those that reached the
// target for the former two.
func (t *TTA) rank(runs []*Run, peers []int) {
	var reached, toEpochs, epochs []float64
	for _, k := range peers {
		if t.Runs[k].Reached {
			reached = append(reached, t.Runs[k].TimeS)
			toEpochs = append(toEpochs, float64(t.Runs[k].Epoch))
		}
		if m := medianEpoch(runs[k]); m > 0 {
			epochs = append(epochs, m)
		}
	}
	baseT, baseE, baseEpoch := median(reached), median(toEpochs), median(epochs)
	var order []int
	for i := range t.Runs {
		rt := &t.Runs[i]
		if rt.Reached {
			order = append(order, i)
			if baseT > 0 && rt.TimeS > 0 {
				rt.Speedup = baseT / rt.TimeS
			}
			if baseE > 0 && rt.Epoch > 0 {
				rt.EpochsSpeedup = baseE / float64(rt.Epoch)
			}
		}
		if m := medianEpoch(runs[i]); baseEpoch > 0 && m > 0 {
			rt.EpochSpeedup = baseEpoch / m
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(t.Runs[a].TimeS, t.Runs[b].TimeS) })
	for k, i := range order {
		t.Runs[i].Rank = k + 1
	}
}

// medianEpoch returns the median epoch wall time of a run's ledger.
func medianEpoch(r *Run) float64 {
	v := make([]float64, len(r.Ledger.Epochs))
	for i, e := range r.Ledger.Epochs {
		v[i] = e.WallS
	}
	return median(v)
}
