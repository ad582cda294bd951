package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/cli/trainflags"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// RunOptions are the inputs of `gnnscope run`.
type RunOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	// Train holds the experiment flags shared with `gnnscope train`.
	Train    trainflags.Flags
	Spec     string
	Variants []string
	Parallel bool
	Wait     bool
	Wide     bool
	JSON     bool
	Quiet    bool
	Cancel   string
	Attach   string
	// Cmds are the --cmd values: NAME=COMMAND or COMMAND.
	Cmds    []string
	NoAuto  bool
	Repeats int
	// Ablation runs the baseline, each optimization of the optimized
	// variant alone and optimized (runner.AblationVariants).
	Ablation bool
	// LogMax is --log-max: the cap of each run's log, a size.
	LogMax string
	// TorchProfile is --torch-profile: training steps of each external
	// run to capture with torch.profiler (0 = none).
	TorchProfile int
	// Listen is --listen: the HOST:PORT of a collector for the ranks of
	// the --cmd runs on other machines ("" = none).
	Listen string
}

// NewCmdRun returns `gnnscope run`. With runF, the command calls it with
// the parsed options instead of running.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "run [train flags] [--spec FILE] [--variants LIST | --ablation] [--cmd [NAME=]COMMAND]... [--listen ADDR:PORT] [--parallel] [--wait [--json]]",
		Short: "Launch baseline and optimized runs of an experiment in the background and compare them",
		Long:  longHelp(),
		Example: `  gnnscope run --data synth-small --epochs 5 --wait
  gnnscope run --data cora.npz --model sage --fanout 25,10 --variants baseline,optimized --wait --json
  gnnscope run --spec sage.toml --variants baseline,workers-only --parallel
  gnnscope run --cmd base='python3 train.py' --cmd opt='python3 train.py --workers 4' --wait
  gnnscope run --cmd 'python3 train.py' --variants baseline --repeats 3
  gnnscope run --cmd 'srun --export=ALL python3 train.py' --listen 0.0.0.0:7000
  gnnscope run --data synth-small --fanout 15,10 --ablation --repeats 3 --wait
  gnnscope run --attach 20261122-153045-ab12
  gnnscope run --cancel 20261122-153045-ab12
  gnnscope run --cancel last`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Train.Parsed(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return runRun(opts)
		},
	}
	fl := cmd.Flags()
	opts.Train.Register(fl, "sage")
	fl.StringVar(&opts.Spec, "spec", "", "TOML spec file with the experiment and its variants")
	fl.StringSliceVar(&opts.Variants, "variants", nil, "variants to run, comma-separated (default: the spec's, else baseline,optimized)")
	fl.BoolVar(&opts.Parallel, "parallel", false, "start every run at once instead of one after the other")
	fl.BoolVar(&opts.Wait, "wait", false, "follow the runs, then print the comparison table")
	fl.BoolVar(&opts.Wide, "wide", false, "with --wait: every column of the table, not only those that fit 80")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON on stdout (with --wait: the comparison)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	fl.StringVar(&opts.Cancel, "cancel", "", "cancel the runs of session `ID`")
	fl.StringVar(&opts.Attach, "attach", "", "wait for the runs of an existing session `ID`, then compare them")
	fl.StringArrayVar(&opts.Cmds, "cmd", nil, "run `[NAME=]COMMAND` as an external run (may repeat)")
	fl.BoolVar(&opts.NoAuto, "no-auto", false, "external runs: no auto-instrumentation (the client stays importable)")
	fl.IntVar(&opts.TorchProfile, "torch-profile", 0, "external runs: capture `STEPS` training steps with torch.profiler after a few warm-up steps (the trace goes to runs/NAME.torch.json)")
	fl.StringVar(&opts.Listen, "listen", "", "with --cmd: collect the events of ranks on other machines at `ADDR:PORT`")
	fl.IntVar(&opts.Repeats, "repeats", 1, "run every variant `N` times (default: the spec's repeats, else 1)")
	fl.BoolVar(&opts.Ablation, "ablation", false, "run the baseline, each optimization of optimized alone, and optimized (the speedup waterfall's runs)")
	fl.StringVar(&opts.LogMax, "log-max", "", "cap each run's log at `SIZE`, its head and tail kept (default: the spec's log_max, else 64MiB)")
	return cmd
}

func runRun(opts *RunOptions) error {
	if opts.Cancel != "" || opts.Attach != "" {
		for _, name := range []string{"spec", "variants", "parallel", "wait", "cmd", "no-auto", "repeats", "ablation", "log-max", "torch-profile", "listen"} {
			if opts.Train.Changed[name] {
				return fmt.Errorf("--%s does not go with --cancel or --attach", name)
			}
		}
		if opts.Cancel != "" && opts.Attach != "" {
			return errors.New("give --cancel or --attach, not both")
		}
	}
	store, err := opts.OpenStore("")
	if err != nil {
		return err
	}
	if opts.Cancel != "" {
		return cancelRun(opts, store)
	}
	if opts.Attach != "" {
		s, err := store.MatchSession(opts.Attach)
		if err != nil {
			return err
		}
		return waitAndCompare(opts, s)
	}
	exp, variants, err := selectVariants(opts)
	if err != nil {
		return err
	}
	if opts.Train.Changed["repeats"] {
		exp.Repeats = opts.Repeats // over the spec's repeats
	}
	if opts.LogMax != "" {
		n, err := units.ParseSize(opts.LogMax)
		if err != nil || n < runner.MinLogMax {
			return fmt.Errorf("--log-max %q: a size of at least %s, such as 64MiB", opts.LogMax, units.Bytes(runner.MinLogMax))
		}
		exp.LogMax = n // over the spec's log_max
	}
	s, err := runner.Launch(store, exp, variants, runner.LaunchOptions{Parallel: opts.Parallel, Warn: opts.IO.ErrOut})
	if err != nil {
		if s != nil {
			return fmt.Errorf("session %s (%s): %w", s.ID(), s.Dir(), err)
		}
		if opts.Spec != "" {
			return fmt.Errorf("%s: %w", opts.Spec, err)
		}
		return err
	}
	if opts.Wait {
		return waitAndCompare(opts, s)
	}
	names, err := launchedRuns(s)
	if err != nil {
		return err
	}
	if opts.JSON {
		t, err := runner.Compare(s)
		if err != nil {
			return err
		}
		return opts.IO.WriteJSON(t)
	}
	how := "one after the other"
	if opts.Parallel {
		how = "all at once"
	}
	fmt.Fprintf(opts.IO.Out, "session %s\nfolder  %s\n", s.ID(), s.Dir())
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "%d runs (%s) started %s in the background.\n  follow: gnnscope run --attach %s\n  cancel: gnnscope run --cancel %s\n",
			len(names), strings.Join(names, ", "), how, s.ID(), s.ID())
	}
	return nil
}

// ownFlags are run's flags that are not training flags.
var ownFlags = []string{"spec", "variants", "parallel", "wait", "wide", "json", "quiet", "cancel", "attach", "cmd", "no-auto", "repeats", "ablation", "log-max", "torch-profile", "listen"}

// selectVariants returns the experiment and the variants to launch: the
// spec's or the built-in ones (as --variants picks), then the --cmd ones.
// With --cmd and neither --spec nor --variants only the commands run, and
// a training flag is refused: there is no engine run for it to set.
func selectVariants(opts *RunOptions) (runner.Experiment, []runner.Variant, error) {
	if opts.Repeats < 1 {
		return runner.Experiment{}, nil, fmt.Errorf("--repeats must be at least 1, got %d", opts.Repeats)
	}
	var cmds []runner.Variant
	for _, c := range opts.Cmds {
		v, err := runner.ParseCmd(c)
		if err != nil {
			return runner.Experiment{}, nil, err
		}
		v.External.NoAuto = opts.NoAuto
		v.External.TorchProfile = opts.TorchProfile
		v.External.Listen = opts.Listen
		cmds = append(cmds, v)
	}
	if err := checkListen(opts, len(cmds)); err != nil {
		return runner.Experiment{}, nil, err
	}
	if opts.NoAuto && len(cmds) == 0 && opts.Spec == "" {
		return runner.Experiment{}, nil, errors.New("--no-auto goes with --cmd or a spec's commands")
	}
	if err := checkTorchProfile(opts, len(cmds) > 0); err != nil {
		return runner.Experiment{}, nil, err
	}
	if opts.Ablation && len(opts.Variants) > 0 {
		return runner.Experiment{}, nil, errors.New("--ablation picks the variants itself: it goes without --variants")
	}
	if len(cmds) > 0 && opts.Spec == "" && len(opts.Variants) == 0 && !opts.Ablation {
		for name := range opts.Train.Changed {
			if !slices.Contains(ownFlags, name) {
				return runner.Experiment{}, nil, fmt.Errorf("--%s sets the engine's runs, and --cmd alone starts none (add --variants)", name)
			}
		}
		return runner.Experiment{}, cmds, nil
	}
	exp, defined, ablation, err := experiment(opts)
	if err != nil {
		return exp, nil, err
	}
	if ablation && len(opts.Variants) == 0 {
		variants, err := runner.AblationVariants(exp, runner.VariantParamsFor(exp.Train))
		if err != nil {
			return exp, nil, err
		}
		return exp, append(variants, cmds...), nil
	}
	for _, v := range defined {
		if v.External == nil {
			continue
		}
		if opts.NoAuto {
			v.External.NoAuto = true
			v.External.TorchProfile = 0
		}
		if opts.TorchProfile > 0 && !v.External.NoAuto {
			v.External.TorchProfile = opts.TorchProfile
		}
	}
	variants, err := runner.SelectVariants(defined, opts.Variants, runner.VariantParamsFor(exp.Train))
	if err != nil {
		return exp, nil, err
	}
	return exp, append(variants, cmds...), nil
}

// checkTorchProfile checks --torch-profile: a number of steps, for
// external runs (--cmd or a spec's), with the auto-instrumentation that
// finds the steps.
func checkTorchProfile(opts *RunOptions, cmds bool) error {
	if opts.TorchProfile == 0 {
		return nil
	}
	if err := runner.CheckTorchProfile(opts.TorchProfile); err != nil {
		return fmt.Errorf("--torch-profile: %w", err)
	}
	if opts.NoAuto {
		return errors.New("--torch-profile needs the auto-instrumentation that --no-auto turns off")
	}
	if !cmds && opts.Spec == "" {
		return errors.New("--torch-profile goes with --cmd or a spec's commands")
	}
	return nil
}

// checkListen checks --listen: an address, for the --cmd runs, one of
// them at a time.
func checkListen(opts *RunOptions, cmds int) error {
	if opts.Listen == "" {
		return nil
	}
	if cmds == 0 {
		return errors.New("--listen goes with --cmd (a spec's command has its own listen key)")
	}
	if err := runner.CheckListen(opts.Listen); err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if opts.Parallel && (cmds > 1 || opts.Repeats > 1) {
		return errors.New("--listen with --parallel: the runs of the commands would listen on one address at once")
	}
	return nil
}

// launchedRuns returns the runs of a launched session in launch order.
func launchedRuns(s *sessions.Session) ([]string, error) {
	states, err := runner.RunStates(s)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(states))
	for i, r := range states {
		names[i] = r.Run
	}
	return names, nil
}

// experiment builds the experiment from the spec (if any) and the flags;
// it returns the spec's variants and whether an ablation runs (--ablation
// or the spec's ablation key).
func experiment(opts *RunOptions) (runner.Experiment, []runner.Variant, bool, error) {
	tf := &opts.Train
	if opts.Spec == "" {
		exp, err := tf.Experiment()
		return exp, nil, opts.Ablation, err
	}
	spec, err := runner.LoadSpec(opts.Spec)
	if err != nil {
		return runner.Experiment{}, nil, false, err
	}
	ablation := opts.Ablation || spec.Ablation
	exp := spec.Experiment
	if tf.Changed["data"] {
		exp.Data = tf.Data
	}
	if tf.Changed["no-cache"] {
		exp.NoCache = tf.NoCache
	}
	exp.Split = tf.ApplySplit(exp.Split)
	// train flags set on the command line override the spec's [train]
	over, err := tf.Keys(false)
	if err != nil {
		return exp, nil, false, err
	}
	if exp.Train, err = runner.ApplyOverrides(exp.Train, over); err != nil {
		return exp, nil, false, fmt.Errorf("%s with the command-line flags: %w", opts.Spec, err)
	}
	if exp.Data == "" {
		return exp, spec.Variants, ablation, nil // commands only: Launch checks an engine variant's need of data
	}
	return exp, spec.Variants, ablation, exp.Validate()
}

// longHelp is run's --help text; the details are help topics (topics.go).
func longHelp() string {
	return `Launch one run per variant of an experiment as background worker processes
and, with --wait, follow them and print a comparison table.

The experiment is the dataset, its split and the training config, given
either by the same flags as 'gnnscope train' (the model defaults to sage:
the optimized schedule pipelines neighbor-sampled mini-batches) or by a TOML
spec file (--spec); flags you set on the command line override the spec.
Variants are named overrides of the config; each becomes one run of the
same name. Built in:
  ` + builtinNames() + `

Runs start one after the other, so they do not distort each other's
timings (--parallel: all at once), detached from the terminal: closing it
or losing the SSH connection does not stop them. Without --wait, run prints
the session id and folder and returns at once; with --wait it shows
progress on stderr and ends with the comparison table on stdout (--json:
one object), exiting non-zero if a run did not end ok. Ctrl-C stops waiting
only. --attach ID waits for an existing session the same way; --cancel ID
stops its runs (running ones get SIGTERM, pending ones never start). ID
is a session id, a unique prefix of it, or "last".

Unknown keys or variants and bad values are refused before anything starts.

More in 'gnnscope help TOPIC':
  spec      spec files, the built-in variants and what optimized adapts
  external  profiling a trainer of your own (--cmd, a spec's cmd)
  repeats   --repeats, speedups with intervals, the table's columns
  flags     the experiment flags in detail`
}
