//go:build unix

package explain_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestExplainEngineRuns trains GraphSAGE on synth-tiny for two epochs as
// the baseline (on the training goroutine) and the optimized variant
// (sampler workers, overlapped evaluation), and explains both: every run's exposed times add up to its
// wall time within 1 %, and the verdict names a stage the run has (other
// included: on so small a run, setup can weigh most).
func TestExplainEngineRuns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "2", "--threads", "1",
		"--variants", "baseline,optimized", "--wait", "-q"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	runs, err := s.OrderedRuns()
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs %v: %v", runs, err)
	}
	out, stderr, err := clitest.Run(t, "explain", s.ID(), "--format", "json")
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, stderr)
	}
	var d struct {
		Report struct {
			Runs []struct {
				Run     string
				Verdict struct{ Kind, First string }
				Ledger  struct {
					Whole struct {
						WallS  float64 `json:"wall_s"`
						Stages map[string]struct {
							BusyS    float64 `json:"busy_s"`
							ExposedS float64 `json:"exposed_s"`
						}
					}
					Epochs []struct{ Epoch int }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(d.Report.Runs) != len(runs) {
		t.Fatalf("%d runs explained of %v", len(d.Report.Runs), runs)
	}
	for _, r := range d.Report.Runs {
		w := r.Ledger.Whole
		var sum float64
		for _, st := range w.Stages {
			sum += st.ExposedS
		}
		if w.WallS <= 0 || math.Abs(sum-w.WallS) > 0.01*w.WallS {
			t.Errorf("%s: exposed %.6f s of wall %.6f s", r.Run, sum, w.WallS)
		}
		if len(r.Ledger.Epochs) != 2 || w.Stages["train"].BusyS <= 0 || w.Stages["sample"].BusyS <= 0 {
			t.Errorf("%s: epochs %v, stages %+v", r.Run, r.Ledger.Epochs, w.Stages)
		}
		if !slices.Contains([]string{"bound", "mixed"}, r.Verdict.Kind) || !slices.Contains([]string{"sample", "transfer", "train", "eval", "other"}, r.Verdict.First) {
			t.Errorf("%s: verdict %+v", r.Run, r.Verdict)
		}
	}
}

// TestExplainAblationWaterfall trains synth-tiny with run --ablation (the
// baseline, each optimization of the optimized variant alone, and all
// together) and explains the session: the waterfall's parts are the
// ablation's, all measured, and with the interaction they add up to the
// measured total speedup in log terms.
func TestExplainAblationWaterfall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "2", "--threads", "1",
		"--ablation", "--wait", "-q"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	out, stderr, err := clitest.Run(t, "explain", s.ID(), "--format", "json")
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, stderr)
	}
	var d struct {
		Waterfall struct {
			Waterfall *struct {
				Total struct{ Log, Speedup float64 }
				Parts []struct {
					Name               string
					Log                float64
					Predicted, Unknown bool
				}
				Interaction struct{ Log float64 }
			}
			Why string `json:"not_estimated"`
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w := d.Waterfall.Waterfall
	if w == nil {
		t.Fatalf("no waterfall: %s", d.Waterfall.Why)
	}
	runs, err := s.OrderedRuns()
	if err != nil {
		t.Fatal(err)
	}
	sum := w.Interaction.Log
	for _, p := range w.Parts {
		if p.Predicted || p.Unknown || !slices.Contains(runs, p.Name) {
			t.Errorf("part %+v: not measured by a run of %v", p, runs)
		}
		sum += p.Log
	}
	t.Logf("parts %+v, interaction %.4f, total %.4f", w.Parts, w.Interaction.Log, w.Total.Log)
	if len(w.Parts) == 0 || w.Total.Speedup <= 0 || math.Abs(sum-w.Total.Log) > 1e-9 {
		t.Errorf("parts %+v and interaction %.6f add up to %.6f, total %.6f", w.Parts, w.Interaction.Log, sum, w.Total.Log)
	}
}
