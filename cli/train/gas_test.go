package train_test

import (
	"encoding/json"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
)

// TestTrainGASModelFlags: GCNII takes its paper defaults (alpha, theta,
// conv weight decay, patience) unless flags override them, every model
// trains under GAS, and `train --json` reports the history figures.
func TestTrainGASModelFlags(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	type result struct {
		Status profile.Status `json:"status"`
		Config struct {
			Model      string   `json:"model"`
			Layers     int      `json:"layers"`
			Alpha      float64  `json:"alpha"`
			Theta      float64  `json:"theta"`
			WDConv     *float64 `json:"wd_conv"`
			WDOut      *float64 `json:"wd_out"`
			ClipNorm   float64  `json:"clip_norm"`
			Patience   int      `json:"patience"`
			Activation string   `json:"activation"`
			Epochs     int      `json:"epochs"`
		} `json:"config"`
		StalenessMean *float64 `json:"staleness_mean"`
		StalenessMax  *int64   `json:"staleness_max"`
		HistoryRelErr *float64 `json:"history_rel_err"`
		HistoryBytes  int64    `json:"history_bytes"`
	}
	run := func(args ...string) result {
		t.Helper()
		base := []string{"train", "--data", "synth-tiny", "--threads", "1", "--json", "-q",
			"--sampler", "gas", "--parts", "8", "--parts-per-batch", "2", "--epochs", "2"}
		out, stderr, err := clitest.Run(t, append(base, args...)...)
		if err != nil {
			t.Fatalf("train %v: %v\n%s", args, err, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r.Status != "ok" || r.StalenessMean == nil || r.StalenessMax == nil || r.HistoryRelErr == nil || r.HistoryBytes <= 0 {
			t.Fatalf("train %v: status %s, history figures %v %v %v %d", args, r.Status, r.StalenessMean, r.StalenessMax, r.HistoryRelErr, r.HistoryBytes)
		}
		return r
	}
	c := run("--model", "gcnii", "--layers", "3", "--hidden", "8").Config
	if c.Alpha != 0.1 || c.Theta != 0.5 || c.WDConv == nil || *c.WDConv != 0.01 || c.Patience != 100 || c.WDOut != nil || c.Layers != 3 || c.Epochs != 2 {
		t.Errorf("gcnii defaults: %+v", c)
	}
	c = run("--model", "gcnii", "--layers", "2", "--hidden", "8", "--alpha", "0.2", "--theta", "0.7", "--wd-conv", "0.005", "--wd-out", "0", "--clip-norm", "1", "--patience", "0").Config
	if c.Alpha != 0.2 || c.Theta != 0.7 || c.WDConv == nil || *c.WDConv != 0.005 || c.WDOut == nil || *c.WDOut != 0 || c.ClipNorm != 1 || c.Patience != 0 {
		t.Errorf("gcnii flags: %+v", c)
	}
	c = run("--model", "gat", "--heads", "2", "--hidden", "4", "--act", "elu").Config
	if c.Activation != "elu" || c.WDConv != nil || c.Patience != 0 || c.Layers != 2 {
		t.Errorf("gat flags: %+v", c)
	}
	c = run("--model", "appnp", "--layers", "3").Config
	if c.Alpha != 0.1 || c.Layers != 3 {
		t.Errorf("appnp: %+v", c)
	}
}
