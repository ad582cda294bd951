package analysis

import (
	"github.com/gnnscope/gnnscope/profile"
	"slices"
	"strings"
	"testing"
)

// runWith is a run whose whole ledger has these exposed times.
func runWith(exposed map[Category]float64, cfg RunConfig) *Run {
	return &Run{Name: "r", Config: cfg, Training: *window(exposed)}
}

func rule(t *testing.T, r *Run, name string) Advice {
	t.Helper()
	for _, a := range Advise(r, nil) {
		if a.Rule == name {
			return a
		}
	}
	t.Fatalf("no rule %s", name)
	return Advice{}
}

func flags(a Advice) []string {
	var out []string
	for _, t := range a.Try {
		out = append(out, t.Flag)
	}
	return out
}

func TestAdviceSampling(t *testing.T) {
	bound := map[Category]float64{Sample: 50, Train: 50}
	a := rule(t, runWith(bound, RunConfig{Cores: 8}), RuleSampling)
	if !a.Fired || !slices.Equal(flags(a), []string{"--sampler-workers 4"}) || !strings.Contains(a.Figure, "50 %") {
		t.Errorf("baseline: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Cores: 8, SamplerWorkers: 2}), RuleSampling)
	if !slices.Equal(flags(a), []string{"--sampler-workers 4"}) || len(a.Already) != 1 {
		t.Errorf("2 workers: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Cores: 8, SamplerWorkers: 7}), RuleSampling)
	if !a.Fired || len(a.Try) != 0 || !strings.Contains(a.Already[0], "no core left") {
		t.Errorf("all cores: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Cores: 8, SamplerWorkers: 7, Device: "cuda", SamplerDevice: "cuda"}), RuleSampling)
	if len(a.Try) != 0 || len(a.Already) != 2 {
		t.Errorf("cuda sampler already: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Cores: 8, SamplerWorkers: 7, Device: "cuda:0"}), RuleSampling)
	if !slices.Equal(flags(a), []string{"--sampler-device cuda"}) {
		t.Errorf("cuda: %+v", a)
	}
	if a := rule(t, runWith(map[Category]float64{Sample: 10, Train: 90}, RunConfig{}), RuleSampling); a.Fired {
		t.Errorf("under the threshold: %+v", a)
	}
	if a := rule(t, runWith(bound, RunConfig{External: true}), RuleSampling); a.Fired {
		t.Errorf("external runs get the loader rule: %+v", a)
	}
}

func TestAdviceTransfer(t *testing.T) {
	bound := map[Category]float64{Transfer: 30, Train: 70}
	a := rule(t, runWith(bound, RunConfig{Sampler: "neighbor"}), RuleTransfer)
	if !a.Fired || !slices.Equal(flags(a), []string{"--cache-bytes 20%"}) {
		t.Errorf("cpu: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Sampler: "neighbor", Device: "cuda"}), RuleTransfer)
	if !slices.Equal(flags(a), []string{"--cache-bytes 20%", "--features uva", "--async-transfer"}) {
		t.Errorf("cuda: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{Sampler: "neighbor", Device: "cuda", CacheBytes: "0.1G", FeatureStore: "uva", AsyncTransfer: true}), RuleTransfer)
	if len(a.Try) != 0 || len(a.Already) != 3 {
		t.Errorf("already all: %+v", a)
	}
	if a := rule(t, runWith(map[Category]float64{Transfer: 10, Train: 90}, RunConfig{}), RuleTransfer); a.Fired {
		t.Errorf("under the threshold: %+v", a)
	}
}

func TestAdviceEval(t *testing.T) {
	bound := map[Category]float64{Eval: 40, Train: 60}
	a := rule(t, runWith(bound, RunConfig{EvalEvery: 1}), RuleEval)
	if !a.Fired || len(a.Try) != 3 || a.Try[0].Flag != "--overlap-eval" || a.Try[1].Flag != "--eval-every 5" {
		t.Errorf("%+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{EvalEvery: 5, OverlapEval: true, EvalCut: 0.3}), RuleEval)
	if !a.Fired || len(a.Try) != 0 || len(a.Already) != 3 {
		t.Errorf("already: %+v", a)
	}
	if a := rule(t, runWith(map[Category]float64{Eval: 5, Train: 95}, RunConfig{}), RuleEval); a.Fired {
		t.Errorf("under the threshold: %+v", a)
	}
}

func TestAdviceMemory(t *testing.T) {
	r := runWith(map[Category]float64{Train: 10}, RunConfig{MemGuard: "split"})
	r.BudgetBytes, r.PeakBytes, r.GuardActions, r.GuardPeak, r.GuardS = 100<<20, 90<<20, 3, 150<<20, 1
	a := rule(t, r, RuleMemory)
	if !a.Fired || !slices.Equal(flags(a), []string{"--mem-budget 158.0MiB"}) || !strings.Contains(a.Text, "3 batches") || !strings.Contains(a.Text, "10 %") {
		t.Errorf("guard acted: %+v", a)
	}
	r = runWith(map[Category]float64{Train: 10}, RunConfig{})
	r.BudgetBytes, r.PeakBytes = 100<<20, 95<<20
	if a := rule(t, r, RuleMemory); !a.Fired || !slices.Equal(flags(a), []string{"--mem-guard split"}) {
		t.Errorf("near the budget: %+v", a)
	}
	r.PeakBytes = 50 << 20
	if a := rule(t, r, RuleMemory); a.Fired {
		t.Errorf("far from the budget: %+v", a)
	}
	r.BudgetBytes = 0
	if a := rule(t, r, RuleMemory); a.Fired || a.Figure != "no memory budget recorded" {
		t.Errorf("no budget: %+v", a)
	}
}

func TestAdviceStale(t *testing.T) {
	r := runWith(map[Category]float64{Train: 10}, RunConfig{Parts: 8, PartsPerBatch: 2})
	r.StaleMean = 3.5
	if a := rule(t, r, RuleStale); !a.Fired || !slices.Equal(flags(a), []string{"--parts-per-batch 4"}) {
		t.Errorf("%+v", a)
	}
	r.Config.PartsPerBatch = 8
	if a := rule(t, r, RuleStale); !a.Fired || len(a.Try) != 0 || len(a.Already) != 1 {
		t.Errorf("every part already: %+v", a)
	}
	r.StaleMean = 1
	if a := rule(t, r, RuleStale); a.Fired {
		t.Errorf("fresh: %+v", a)
	}
}

func TestAdviceLoader(t *testing.T) {
	bound := map[Category]float64{Sample: 60, Train: 40}
	a := rule(t, runWith(bound, RunConfig{External: true}), RuleLoader)
	if !a.Fired || len(a.Try) != 2 || !strings.Contains(a.Text, "not recorded") {
		t.Errorf("unknown workers: %+v", a)
	}
	zero, four, yes := 0, 4, true
	a = rule(t, runWith(bound, RunConfig{External: true, NumWorkers: &zero}), RuleLoader)
	if !slices.Equal(flags(a), []string{"DataLoader(..., num_workers=4)", "DataLoader(..., pin_memory=True)"}) {
		t.Errorf("num_workers=0: %+v", a)
	}
	a = rule(t, runWith(bound, RunConfig{External: true, NumWorkers: &four, PinMemory: &yes, Cores: 4}), RuleLoader)
	if len(a.Try) != 0 || len(a.Already) != 2 {
		t.Errorf("already: %+v", a)
	}
	if a := rule(t, runWith(bound, RunConfig{}), RuleLoader); a.Fired {
		t.Errorf("engine run: %+v", a)
	}
}

// The gain seam: a GainFunc fills each proposed change's gain.
func TestAdviceGain(t *testing.T) {
	r := runWith(map[Category]float64{Sample: 50, Train: 50}, RunConfig{Cores: 8})
	gain := func(_ *Run, c Change) (Gain, bool) {
		return Gain{EpochS: 1, Speedup: 2, Model: "test"}, c.Kind == "sampler-workers"
	}
	for _, a := range Fired(Advise(r, gain)) {
		if a.Rule == RuleSampling && (a.Try[0].Gain == nil || a.Try[0].Gain.Speedup != 2) {
			t.Errorf("%+v", a.Try)
		}
	}
	if a := Advise(r, nil); a[0].Try[0].Gain != nil {
		t.Errorf("nil GainFunc estimated %+v", a[0].Try[0].Gain)
	}
}

// The config is read from run_start, whatever else it holds.
func TestParseConfig(t *testing.T) {
	r := runOf(nil)
	if r.Config.SamplerWorkers != 0 {
		t.Fatal(r.Config)
	}
	e := runStart("p", map[string]any{"sampler_workers": 3, "overlap_eval": true, "device": "cuda:1", "mem_budget": "1GiB", "prefetch": "bad", "num_workers": 2}, 16)
	r = runOf([]profile.Event{e})
	c := r.Config
	if c.SamplerWorkers != 3 || !c.OverlapEval || !c.OnCUDA() || c.Cores != 16 || c.Prefetch != 0 || c.NumWorkers == nil || *c.NumWorkers != 2 {
		t.Errorf("%+v", c)
	}
}
