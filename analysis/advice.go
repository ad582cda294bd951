package analysis

import (
	"fmt"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Thresholds of the advice rules.
const (
	SampleThreshold   = 0.20 // exposed sampling (loading) over wall time
	TransferThreshold = 0.15 // exposed transfer over wall time
	EvalThreshold     = 0.20 // exposed evaluation over wall time
	PeakThreshold     = 0.90 // largest batch peak over the memory budget
	StaleThreshold    = 2.0  // mean age of pulled history rows, in optimizer steps
)

// Rule names.
const (
	RuleSampling = "exposed-sampling"
	RuleTransfer = "exposed-transfer"
	RuleEval     = "evaluation-share"
	RuleMemory   = "memory-budget"
	RuleStale    = "staleness"
	RuleLoader   = "external-loader"
)

// Change is what an advice proposes, in terms a what-if model can replay.
type Change struct {
	Kind  string `json:"kind"`            // the flag: sampler-workers, overlap-eval, cache-bytes, ...
	Value string `json:"value,omitempty"` // its value as the flag takes it
}

// Gain is what a what-if model predicts a change would give.
type Gain struct {
	EpochS  float64 `json:"epoch_s"` // the predicted epoch time
	Speedup float64 `json:"speedup"` // the run's median epoch time over EpochS
	Model   string  `json:"model,omitempty"`
}

// GainFunc predicts what a change would give a run; ok is false where it
// cannot. A nil GainFunc estimates nothing.
type GainFunc func(r *Run, c Change) (g Gain, ok bool)

// Advice is one rule's outcome on a run.
type Advice struct {
	Rule      string `json:"rule"`
	Threshold string `json:"threshold"`
	Figure    string `json:"figure"` // the figure the rule read
	Fired     bool   `json:"fired"`
	Text      string `json:"text,omitempty"`
	// Try are the changes to try, as flags; Already what the run does of
	// what the rule would propose, so it is not proposed again.
	Try     []Try    `json:"try,omitempty"`
	Already []string `json:"already,omitempty"`
}

// Try is one proposed change, with the gain the what-if model predicts
// (nil: not estimated).
type Try struct {
	Flag   string `json:"flag"`
	Change Change `json:"change"`
	Gain   *Gain  `json:"gain,omitempty"`
}

// Advise applies every rule to a run; gain, when not nil, estimates each
// proposed change.
func Advise(r *Run, gain GainFunc) []Advice {
	out := []Advice{
		adviseSampling(r), adviseTransfer(r), adviseEval(r),
		adviseMemory(r), adviseStale(r), adviseLoader(r),
	}
	for i := range out {
		for j := range out[i].Try {
			t := &out[i].Try[j]
			if gain != nil {
				if g, ok := gain(r, t.Change); ok {
					t.Gain = &g
				}
			}
		}
	}
	return out
}

// Fired returns the advice that fired.
func Fired(adv []Advice) []Advice {
	var out []Advice
	for _, a := range adv {
		if a.Fired {
			out = append(out, a)
		}
	}
	return out
}

func try(kind, value, flag string) Try {
	return Try{Flag: flag, Change: Change{Kind: kind, Value: value}}
}

func pct(v float64) string { return fmt.Sprintf("%.0f %%", 100*v) }

func exposedFigure(r *Run, c Category) string {
	w := &r.Training
	return fmt.Sprintf("%s exposed %s of wall time (%.3f s of %.3f s)", Label(c, r.Config.External), pct(w.Share(c)), w.Exposed[c], w.WallS)
}

func adviseSampling(r *Run) Advice {
	a := Advice{Rule: RuleSampling, Threshold: "sampling exposed ≥ " + pct(SampleThreshold) + " of wall time (engine runs)",
		Figure: exposedFigure(r, Sample)}
	cfg := &r.Config
	if cfg.External {
		a.Figure = "external run: see " + RuleLoader
		return a
	}
	if r.Training.Share(Sample) < SampleThreshold {
		return a
	}
	a.Fired = true
	a.Text = "the trainer waits on sampling: prepare batches on more sampler workers beside training"
	cores := cfg.Cores
	switch w := cfg.SamplerWorkers; {
	case cores > 0 && w >= cores-1:
		a.Already = append(a.Already, fmt.Sprintf("--sampler-workers %d on %d cores: no core left for more", w, cores))
	case w == 0:
		n := 4
		if cores > 0 {
			n = max(1, min(4, cores/2))
		}
		a.Try = append(a.Try, try("sampler-workers", fmt.Sprint(n), fmt.Sprintf("--sampler-workers %d", n)))
	default:
		n := 2 * w
		if cores > 0 {
			n = min(n, cores-1)
		}
		a.Already = append(a.Already, fmt.Sprintf("--sampler-workers %d", w))
		a.Try = append(a.Try, try("sampler-workers", fmt.Sprint(n), fmt.Sprintf("--sampler-workers %d", n)))
	}
	if cfg.OnCUDA() {
		if cfg.SamplerDevice == "cuda" {
			a.Already = append(a.Already, "--sampler-device cuda")
		} else {
			a.Try = append(a.Try, try("sampler-device", "cuda", "--sampler-device cuda"))
		}
	}
	return a
}

func adviseTransfer(r *Run) Advice {
	a := Advice{Rule: RuleTransfer, Threshold: "transfer exposed ≥ " + pct(TransferThreshold) + " of wall time",
		Figure: exposedFigure(r, Transfer)}
	cfg := &r.Config
	if r.Training.Share(Transfer) < TransferThreshold {
		return a
	}
	a.Fired = true
	a.Text = "the trainer waits on feature transfers: move fewer bytes, or move them beside compute"
	if cfg.External {
		a.Text += " (in the trainer: pin_memory=True and .to(device, non_blocking=True))"
		return a
	}
	if cfg.HasCache() {
		a.Already = append(a.Already, "--cache-bytes "+cfg.CacheBytes)
	} else if cfg.Sampler != "full" {
		a.Try = append(a.Try, try("cache-bytes", "20%", "--cache-bytes 20%"))
	}
	if cfg.OnCUDA() {
		if cfg.FeatureStore == "uva" || cfg.FeatureStore == "device" {
			a.Already = append(a.Already, "--features "+cfg.FeatureStore)
		} else {
			a.Try = append(a.Try, try("features", "uva", "--features uva"))
		}
		if cfg.AsyncTransfer {
			a.Already = append(a.Already, "--async-transfer")
		} else {
			a.Try = append(a.Try, try("async-transfer", "true", "--async-transfer"))
		}
	}
	return a
}

func adviseEval(r *Run) Advice {
	a := Advice{Rule: RuleEval, Threshold: "evaluation exposed ≥ " + pct(EvalThreshold) + " of wall time",
		Figure: exposedFigure(r, Eval)}
	cfg := &r.Config
	if r.Training.Share(Eval) < EvalThreshold {
		return a
	}
	a.Fired = true
	a.Text = "evaluation takes a large share of the wall time: overlap it with training, run it less often, or cut inference"
	if cfg.External {
		a.Text += " (in the trainer: evaluate every few epochs)"
		return a
	}
	if cfg.OverlapEval {
		a.Already = append(a.Already, "--overlap-eval")
	} else {
		a.Try = append(a.Try, try("overlap-eval", "true", "--overlap-eval"))
	}
	if cfg.EvalEvery > 1 {
		a.Already = append(a.Already, fmt.Sprintf("--eval-every %d", cfg.EvalEvery))
	} else {
		a.Try = append(a.Try, try("eval-every", "5", "--eval-every 5"))
	}
	if cfg.EvalCut > 0 {
		a.Already = append(a.Already, fmt.Sprintf("--eval-cut %g", cfg.EvalCut))
	} else {
		a.Try = append(a.Try, try("eval-cut", "0.2", "--eval-cut 0.2 (inference cutting: check its accuracy in time to accuracy)"))
	}
	return a
}

func adviseMemory(r *Run) Advice {
	a := Advice{Rule: RuleMemory, Threshold: "guard actions > 0, or the largest batch peak ≥ " + pct(PeakThreshold) + " of the budget"}
	if r.BudgetBytes <= 0 {
		a.Figure = "no memory budget recorded"
		return a
	}
	ratio := float64(r.PeakBytes) / float64(r.BudgetBytes)
	a.Figure = fmt.Sprintf("largest batch peak %s of %s budget (%s); guard actions %d", units.Bytes(r.PeakBytes), units.Bytes(r.BudgetBytes), pct(ratio), r.GuardActions)
	if r.GuardActions == 0 && ratio < PeakThreshold {
		return a
	}
	a.Fired = true
	need := max(r.GuardPeak, r.PeakBytes)
	need += need / 20 // 5 % headroom
	need = (need + (1<<20 - 1)) &^ (1<<20 - 1)
	if r.GuardActions > 0 {
		w := r.Training.WallS
		share := 0.0
		if w > 0 {
			share = r.GuardS / w
		}
		a.Text = fmt.Sprintf("the memory guard changed %d batches (guard spans %.3f s, %s of wall time); a budget of %s would have fit the largest predicted peak",
			r.GuardActions, r.GuardS, pct(share), units.Bytes(need))
	} else {
		a.Text = fmt.Sprintf("batch peaks come within %s of the budget: a larger batch would run out of memory", pct(1-ratio))
	}
	if r.GuardActions > 0 || r.Config.MemGuard != "" {
		if r.Config.MemGuard != "" {
			a.Already = append(a.Already, "--mem-guard "+r.Config.MemGuard)
		}
		a.Try = append(a.Try, try("mem-budget", units.FormatSize(need), "--mem-budget "+units.FormatSize(need)))
	} else {
		a.Try = append(a.Try, try("mem-guard", "split", "--mem-guard split"))
	}
	return a
}

func adviseStale(r *Run) Advice {
	a := Advice{Rule: RuleStale, Threshold: fmt.Sprintf("mean staleness of pulled history rows ≥ %g steps", StaleThreshold),
		Figure: fmt.Sprintf("staleness mean %.2f, max %.0f steps", r.StaleMean, r.StaleMax)}
	if r.StaleMean < StaleThreshold {
		return a
	}
	a.Fired = true
	a.Text = "histories are stale: more parts per batch pull fresher rows (and cost memory)"
	cfg := &r.Config
	ppb := max(cfg.PartsPerBatch, 1)
	if cfg.Parts > 0 && ppb >= cfg.Parts {
		a.Already = append(a.Already, fmt.Sprintf("--parts-per-batch %d of %d parts", ppb, cfg.Parts))
		return a
	}
	n := 2 * ppb
	if cfg.Parts > 0 {
		n = min(n, cfg.Parts)
	}
	a.Try = append(a.Try, try("parts-per-batch", fmt.Sprint(n), fmt.Sprintf("--parts-per-batch %d", n)))
	return a
}

func adviseLoader(r *Run) Advice {
	a := Advice{Rule: RuleLoader, Threshold: "external run: data loading exposed ≥ " + pct(SampleThreshold) + " of wall time",
		Figure: exposedFigure(r, Sample)}
	cfg := &r.Config
	if !cfg.External {
		a.Figure = "engine run: see " + RuleSampling
		return a
	}
	if r.Training.Share(Sample) < SampleThreshold {
		return a
	}
	a.Fired = true
	a.Text = "the main process waits for its next batch: load batches in DataLoader workers"
	switch {
	case cfg.NumWorkers == nil:
		a.Text += " (num_workers was not recorded)"
		a.Try = append(a.Try, try("num_workers", "4", "DataLoader(..., num_workers=4)"))
	case *cfg.NumWorkers > 0:
		a.Already = append(a.Already, fmt.Sprintf("num_workers=%d", *cfg.NumWorkers))
		n := 2 * *cfg.NumWorkers
		if cfg.Cores > 0 {
			n = min(n, cfg.Cores-1)
		}
		if n > *cfg.NumWorkers {
			a.Try = append(a.Try, try("num_workers", fmt.Sprint(n), fmt.Sprintf("DataLoader(..., num_workers=%d)", n)))
		}
	default:
		a.Try = append(a.Try, try("num_workers", "4", "DataLoader(..., num_workers=4)"))
	}
	if cfg.PinMemory != nil && *cfg.PinMemory {
		a.Already = append(a.Already, "pin_memory=True")
	} else {
		a.Try = append(a.Try, try("pin_memory", "true", "DataLoader(..., pin_memory=True)"))
	}
	return a
}

// fmtAcc writes an accuracy with 4 decimals.
func fmtAcc(v float64) string { return fmt.Sprintf("%.4f", v) }
