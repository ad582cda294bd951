package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

// TestRunSpecFlagOverrides checks that every training flag given beside
// --spec overrides the spec's [train] key, zero values included.
func TestRunSpecFlagOverrides(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "exp.toml")
	if err := os.WriteFile(spec, []byte(`
data = "synth-tiny"
[train]
model = "sage"
epochs = 5
eval_cut = 0.3
cut_rule = "random"
[variants.baseline]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, err := flagtest.Parse(t, NewCmdRun, "--spec", spec, "--mem-budget", "64MiB", "--on-oom", "skip", "--mem-guard", "split",
		"--eval-cut", "0", "--cut-rule", "degree-product", "--cut-norm", "scale", "--fanout", "5,5", "--act", "elu")
	if err != nil {
		t.Fatal(err)
	}
	exp, _, _, err := experiment(opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := exp.Train
	if tr.MemBudget != 64<<20 || tr.OnOOM != "skip" || tr.MemGuard != "split" || tr.EvalCut != 0 ||
		tr.CutRule != "degree-product" || tr.CutNorm != "scale" || tr.Activation != "elu" ||
		len(tr.Fanouts) != 2 || tr.Fanouts[0] != 5 || tr.Epochs != 5 {
		t.Errorf("overrides not applied: %+v", tr)
	}
}
