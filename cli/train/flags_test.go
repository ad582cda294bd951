package train

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdTrainDefaults(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdTrain)
	if err != nil {
		t.Fatal(err)
	}
	if opts.JSON || opts.History || opts.Quiet || opts.NoRecord || opts.Train.Data != "synth-tiny" {
		t.Errorf("options %+v", opts)
	}
	cfg, err := opts.Train.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "gcn" || cfg.Sampler != "full" || cfg.Hidden != 64 || cfg.Heads != 0 || !slices.Equal(cfg.Fanouts, []int{25, 10}) ||
		cfg.PartsPerBatch != 1 || cfg.OnOOM != "abort" || cfg.CutRule != "degree-sum" || cfg.CutNorm != "renorm" || cfg.Device != "cpu" {
		t.Errorf("default config %+v", cfg)
	}
}

func TestNewCmdTrainFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdTrain, "--data", "cora.npz", "--model", "sage", "--fanout", "5,5", "--batch-size", "64",
		"--mem-budget", "0.1G", "--sampler-workers", "2", "--prefetch", "3", "--overlap-eval", "--json", "--history", "-q", "--no-record",
		"--split", "frac", "--train-frac", "0.5", "--split-seed", "3", "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	if !opts.JSON || !opts.History || !opts.Quiet || !opts.NoRecord {
		t.Errorf("options %+v", opts)
	}
	exp, err := opts.Train.Experiment()
	if err != nil {
		t.Fatal(err)
	}
	c := exp.Train
	if exp.Data != "cora.npz" || c.Model != "sage" || c.Sampler != "neighbor" || !slices.Equal(c.Fanouts, []int{5, 5}) || c.BatchSize != 64 ||
		c.MemBudget != 107374182 || c.SamplerWorkers != 2 || c.Prefetch != 3 || !c.OverlapEval || c.Seed != 7 {
		t.Errorf("config %+v", c)
	}
	if s := exp.Split; s.Mode != "frac" || s.TrainFrac != 0.5 || s.Seed == nil || *s.Seed != 3 || s.PerClass != 20 {
		t.Errorf("split %+v", s)
	}
}

// TestNewCmdTrainModelDefaults: unset hyper-parameters follow the model.
func TestNewCmdTrainModelDefaults(t *testing.T) {
	for _, c := range []struct {
		args  []string
		check func(*testing.T, *TrainOptions)
	}{
		{[]string{"--model", "gat"}, func(t *testing.T, o *TrainOptions) {
			cfg, err := o.Train.Config()
			if err != nil || cfg.Hidden != 8 || cfg.Heads != 8 || cfg.LR != 0.005 || cfg.AttnDropout != 0.6 {
				t.Errorf("gat: %+v, %v", cfg, err)
			}
		}},
		{[]string{"--model", "appnp"}, func(t *testing.T, o *TrainOptions) {
			cfg, err := o.Train.Config()
			if err != nil || cfg.Layers != 10 || len(cfg.Fanouts) != 10 || cfg.Alpha != 0.1 {
				t.Errorf("appnp: %+v, %v", cfg, err)
			}
		}},
		{[]string{"--model", "gcnii", "--layers", "4", "--hidden", "32"}, func(t *testing.T, o *TrainOptions) {
			cfg, err := o.Train.Config()
			if err != nil || cfg.Layers != 4 || cfg.Hidden != 32 || cfg.Epochs != 1500 || cfg.WDConv == nil || *cfg.WDConv != 0.01 {
				t.Errorf("gcnii: %+v, %v", cfg, err)
			}
		}},
	} {
		opts, err := flagtest.Parse(t, NewCmdTrain, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		c.check(t, opts)
	}
}

func TestNewCmdTrainBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, `unknown command "extra" for "train"`},
		{[]string{"--mem-budget", "12XB"}, `unknown unit "XB"`},
		{[]string{"--hidden", "many"}, `invalid argument "many" for "--hidden"`},
		{[]string{"--wd-out", "x"}, `invalid argument "x" for "--wd-out"`},
	} {
		if _, err := flagtest.Parse(t, NewCmdTrain, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	// Parsed, but refused when the config is built.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gcn", "--parts", "8"}, "--parts applies to --sampler gas only"},
		{[]string{"--fanout", "5,x", "--model", "sage"}, `--fanout: "x" is not an integer`},
		{[]string{"--hidden", "0"}, "experiment: invalid training config: hidden must be at least 1, got 0"},
		// the dataset and the split are judged before the training config
		{[]string{"--data", "", "--hidden", "0"}, "experiment: no dataset (data)"},
		{[]string{"--split", "halves", "--hidden", "0"}, `split mode "halves" is not one of auto, per-class, frac`},
		// a flag the run ignores is refused first
		{[]string{"--split", "halves", "--model", "gcn", "--parts", "3"}, "--parts applies to --sampler gas only"},
		{[]string{"--model", "gcn", "--cache-bytes", "20%"}, "--cache-bytes applies to --sampler neighbor or gas only"},
		{[]string{"--model", "sage", "--cache-bytes", "20x"}, `cache size "20x"`},
		{[]string{"--model", "sage", "--cache-bytes", "150%"}, "want a percentage from 0% to 100%"},
		{[]string{"--model", "sage", "--cache-policy", "lru", "--cache-bytes", "1MiB"}, `cache policy "lru"`},
		{[]string{"--model", "sage", "--cache-policy", "frequency"}, "without a feature cache"},
		{[]string{"--model", "sage", "--sampler", "gas", "--parts", "4", "--cache-bytes", "1%", "--cache-policy", "frequency"}, "it needs --sampler neighbor"},
	} {
		opts, err := flagtest.Parse(t, NewCmdTrain, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, err := experiment(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
