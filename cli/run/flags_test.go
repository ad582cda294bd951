package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdRunFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--spec", "exp.toml", "--variants", "baseline,workers-only", "--parallel", "--wait", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Spec != "exp.toml" || !slices.Equal(opts.Variants, []string{"baseline", "workers-only"}) || !opts.Parallel || !opts.Wait ||
		!opts.JSON || !opts.Quiet || opts.Cancel != "" || opts.Attach != "" {
		t.Errorf("options %+v", opts)
	}
	opts, err = flagtest.Parse(t, NewCmdRun, "--cancel", "last")
	if err != nil || opts.Cancel != "last" {
		t.Fatalf("--cancel: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdRun, "--attach", "20261122")
	if err != nil || opts.Attach != "20261122" {
		t.Fatalf("--attach: %+v, %v", opts, err)
	}
}

// TestNewCmdRunConfig: run's model defaults to sage, whose optimized
// schedule pipelines sampled mini-batches; the flags are train's.
func TestNewCmdRunConfig(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--data", "synth-small", "--epochs", "3", "--hidden", "16")
	if err != nil {
		t.Fatal(err)
	}
	exp, _, _, err := experiment(opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := exp.Train; exp.Data != "synth-small" || c.Model != "sage" || c.Sampler != "neighbor" || c.Epochs != 3 || c.Hidden != 16 ||
		!slices.Equal(c.Fanouts, []int{25, 10}) {
		t.Errorf("experiment %+v", exp)
	}
	for _, name := range []string{"sampler-workers", "prefetch", "overlap-eval", "no-record", "history"} {
		if _, err := flagtest.Parse(t, NewCmdRun, "--"+name); err == nil || !strings.Contains(err.Error(), "unknown flag: --"+name) {
			t.Errorf("--%s: %v (a variant sets it, not a flag)", name, err)
		}
	}
}

func TestNewCmdRunBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, `unknown command "extra" for "run"`},
		{[]string{"--epochs", "x"}, `invalid argument "x" for "--epochs"`},
		{[]string{"--cancel"}, "flag needs an argument: --cancel"},
	} {
		if _, err := flagtest.Parse(t, NewCmdRun, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	// Parsed, then refused by run before anything starts.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cancel", "x", "--wait"}, "--wait does not go with --cancel or --attach"},
		{[]string{"--cancel", "x", "--attach", "y"}, "give --cancel or --attach, not both"},
	} {
		opts, err := flagtest.Parse(t, NewCmdRun, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if err := runRun(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestNewCmdRunCmdFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--cmd", "python3 train.py --lr 0.01,0.1", "--cmd", "opt=python3 train.py --workers 4",
		"--no-auto", "--repeats", "3")
	if err != nil {
		t.Fatal(err)
	}
	// --cmd may repeat and is never split at commas
	if !slices.Equal(opts.Cmds, []string{"python3 train.py --lr 0.01,0.1", "opt=python3 train.py --workers 4"}) || !opts.NoAuto || opts.Repeats != 3 {
		t.Fatalf("options %+v", opts)
	}
	exp, variants, err := selectVariants(opts)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Data != "" || len(variants) != 2 || variants[0].Name != "external" || variants[1].Name != "opt" ||
		!variants[0].External.NoAuto || !slices.Equal(variants[1].External.Argv, []string{"python3", "train.py", "--workers", "4"}) {
		t.Errorf("--cmd alone: %+v %+v", exp, variants)
	}
	// beside built-in variants, after them
	opts, err = flagtest.Parse(t, NewCmdRun, "--variants", "baseline", "--epochs", "2", "--cmd", "mine=python3 t.py")
	if err != nil {
		t.Fatal(err)
	}
	exp, variants, err = selectVariants(opts)
	if err != nil || exp.Train.Epochs != 2 || len(variants) != 2 || variants[0].Name != "baseline" || variants[0].External != nil ||
		variants[1].Name != "mine" || variants[1].External == nil || variants[1].External.NoAuto {
		t.Errorf("--variants with --cmd: %+v %+v, %v", exp, variants, err)
	}
	if opts, _ := flagtest.Parse(t, NewCmdRun); opts.Repeats != 1 || opts.NoAuto || opts.Cmds != nil {
		t.Errorf("defaults %+v", opts)
	}
}

func TestNewCmdRunCmdRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cmd", "python3 t.py", "--epochs", "3"}, "--epochs sets the engine's runs, and --cmd alone starts none"},
		{[]string{"--cmd", "python3 t.py | tee log"}, "shell syntax"},
		{[]string{"--cmd", "a/b=python3 t.py"}, `run name "a/b"`},
		{[]string{"--cmd", ""}, "command: empty"},
		{[]string{"--no-auto"}, "--no-auto goes with --cmd"},
		{[]string{"--cmd", "true", "--repeats", "0"}, "--repeats must be at least 1"},
	} {
		opts, err := flagtest.Parse(t, NewCmdRun, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, _, err := selectVariants(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	opts, err := flagtest.Parse(t, NewCmdRun, "--cancel", "x", "--cmd", "true")
	if err != nil {
		t.Fatal(err)
	}
	if err := runRun(opts); err == nil || !strings.Contains(err.Error(), "--cmd does not go with --cancel or --attach") {
		t.Errorf("--cancel with --cmd: %v", err)
	}
}

// TestRunAblation: --ablation picks the baseline, each optimization of
// optimized alone and optimized; it refuses --variants.
func TestRunAblation(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--data", "synth-small", "--ablation", "--repeats", "3")
	if err != nil {
		t.Fatal(err)
	}
	_, vs, err := selectVariants(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Name)
	}
	if !slices.Equal(got, []string{"baseline", "pipelined", "overlap-eval", "cache", "optimized"}) {
		t.Errorf("ablation runs %v", got)
	}
	opts, err = flagtest.Parse(t, NewCmdRun, "--data", "synth-small", "--ablation", "--variants", "baseline")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := selectVariants(opts); err == nil || !strings.Contains(err.Error(), "--variants") {
		t.Errorf("--ablation with --variants: %v", err)
	}
}

// --log-max is run's own flag: it goes with --cmd alone.
func TestLogMaxGoesWithCmd(t *testing.T) {
	opts := &RunOptions{Cmds: []string{"true"}, LogMax: "1MiB", Repeats: 1}
	opts.Train.Changed = map[string]bool{"log-max": true}
	if _, vs, err := selectVariants(opts); err != nil || len(vs) != 1 {
		t.Errorf("--cmd with --log-max: %v, %v", vs, err)
	}
}
