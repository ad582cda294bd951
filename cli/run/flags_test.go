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
	exp, _, err := experiment(opts)
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
