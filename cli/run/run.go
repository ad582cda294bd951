package run

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/cli/trainflags"
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
	// TorchProfile is --torch-profile: training steps of each external
	// run to capture with torch.profiler (0 = none).
	TorchProfile int
}

// NewCmdRun returns `gnnscope run`. With runF, the command calls it with
// the parsed options instead of running.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "run [train flags] [--spec FILE] [--variants LIST] [--cmd [NAME=]COMMAND]... [--parallel] [--wait [--json]]",
		Short: "Launch baseline and optimized runs of an experiment in the background and compare them",
		Long:  longHelp(),
		Example: `  gnnscope run --data synth-small --epochs 5 --wait
  gnnscope run --data cora.npz --model sage --fanout 25,10 --variants baseline,optimized --wait --json
  gnnscope run --spec sage.toml --variants baseline,workers-only --parallel
  gnnscope run --cmd base='python3 train.py' --cmd opt='python3 train.py --workers 4' --wait
  gnnscope run --cmd 'python3 train.py' --variants baseline --repeats 3
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
	fl.BoolVar(&opts.Wide, "wide", false, "with --wait: every column of the table (default: the most important that fit 80 columns)")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON on stdout (with --wait: the comparison)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	fl.StringVar(&opts.Cancel, "cancel", "", "cancel the runs of session `ID` (running ones get SIGTERM, pending ones never start)")
	fl.StringVar(&opts.Attach, "attach", "", "wait for the runs of an existing session `ID`, then compare them")
	fl.StringArrayVar(&opts.Cmds, "cmd", nil, "run `[NAME=]COMMAND` as an external run (may repeat; default name "+runner.DefaultExternalName+")")
	fl.BoolVar(&opts.NoAuto, "no-auto", false, "external runs: no auto-instrumentation (the client stays importable)")
	fl.IntVar(&opts.TorchProfile, "torch-profile", 0, "external runs: capture `STEPS` training steps with torch.profiler after a few warm-up steps (the trace goes to runs/NAME.torch.json)")
	fl.IntVar(&opts.Repeats, "repeats", 1, "run every variant `N` times (default: the spec's repeats, else 1)")
	return cmd
}

func runRun(opts *RunOptions) error {
	if opts.Cancel != "" || opts.Attach != "" {
		for _, name := range []string{"spec", "variants", "parallel", "wait", "cmd", "no-auto", "torch-profile", "repeats"} {
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
var ownFlags = []string{"spec", "variants", "parallel", "wait", "wide", "json", "quiet", "cancel", "attach", "cmd", "no-auto", "torch-profile", "repeats"}

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
		cmds = append(cmds, v)
	}
	if opts.NoAuto && len(cmds) == 0 && opts.Spec == "" {
		return runner.Experiment{}, nil, errors.New("--no-auto goes with --cmd or a spec's commands")
	}
	if err := checkTorchProfile(opts, len(cmds) > 0); err != nil {
		return runner.Experiment{}, nil, err
	}
	if len(cmds) > 0 && opts.Spec == "" && len(opts.Variants) == 0 {
		for name := range opts.Train.Changed {
			if !slices.Contains(ownFlags, name) {
				return runner.Experiment{}, nil, fmt.Errorf("--%s sets the engine's runs, and --cmd alone starts none (add --variants)", name)
			}
		}
		return runner.Experiment{}, cmds, nil
	}
	exp, defined, err := experiment(opts)
	if err != nil {
		return exp, nil, err
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
// it returns the spec's variants.
func experiment(opts *RunOptions) (runner.Experiment, []runner.Variant, error) {
	tf := &opts.Train
	if opts.Spec == "" {
		exp, err := tf.Experiment()
		return exp, nil, err
	}
	spec, err := runner.LoadSpec(opts.Spec)
	if err != nil {
		return runner.Experiment{}, nil, err
	}
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
		return exp, nil, err
	}
	if exp.Train, err = runner.ApplyOverrides(exp.Train, over); err != nil {
		return exp, nil, fmt.Errorf("%s with the command-line flags: %w", opts.Spec, err)
	}
	if exp.Data == "" {
		return exp, spec.Variants, nil // commands only: Launch checks an engine variant's need of data
	}
	return exp, spec.Variants, exp.Validate()
}

// longHelp is run's --help text.
func longHelp() string {
	return `Launch one run per variant of an experiment as background worker processes
and, with --wait, follow them and print a comparison table.

The experiment is the dataset, its split and the training config, given
either by the same flags as 'gnnscope train' (the model defaults to sage:
the optimized schedule pipelines neighbor-sampled mini-batches) or by a TOML
spec file (--spec); flags you set on the command line override the spec.

Variants are named overrides of the config. Built in (the workbench's
new-experiment form offers the same):
` + builtinHelp() + `
A spec may define its own in [variants.NAME] tables (any train config key,
JSON names); --variants picks among them and the built-in ones (default:
the spec's variants, else baseline,optimized). Each variant becomes one run
of the same name. Optimized stands for the best configuration under your
constraints: unless cache_bytes is set it caches features (a quarter of
--mem-budget in whole MiB, none under 1 MiB; else 20% of the rows); with
--mem-budget (and neighbor sampling) it runs with the memory guard
(mem_guard = split, unless it sets mem_guard itself), and once its data
is loaded the engine plans the budget: how many batches the sampler
workers gather ahead (the others wait sampled, gathered by the trainer),
and whether the overlapped evaluation runs beside training, in chunks
that fit beside a training batch, or after each epoch when that would
cut edges. The run's run_start lists each decision under "adjusted", with
its sizes; the table's notes, compare and the dashboard repeat them.

External runs profile a trainer of your own: --cmd NAME='COMMAND' (may
repeat) is one run named NAME; a command without NAME= is named "` + runner.DefaultExternalName + `".
A spec's [variants.NAME] table with cmd = "COMMAND" does the same, with
optional env (a table of strings), cwd (relative to where run starts) and
auto = false. The command is split into words as a shell would quote them,
but no shell runs it: for pipes, redirections or $VARIABLES use
sh -c '…'. It runs in a process group of its own with GNNSCOPE_JOURNAL,
GNNSCOPE_SESSION, GNNSCOPE_RUN, GNNSCOPE_VARIANT and GNNSCOPE_AUTO set, its
output in NAME.log, and gnnscope's Python client first on PYTHONPATH: a
PyTorch script records its stages without any change (--no-auto: only
what it records itself with 'import gnnscope'). Exit 0 ends the run ok,
another status failed (the last stderr lines are the error), a signal
crashed, --cancel canceled (SIGINT to the group, SIGTERM 5 s later).
--cmd alone runs only the commands; with --variants or --spec they run
beside the engine's variants in one session.

--repeats N (or a spec's top-level repeats = N, or the workbench form's
Repeats) runs every variant N times, named NAME.r1 ... NAME.rN, the
repeats interleaved ABBA-style (odd repeats in the order given, even ones
reversed: A B, B A, A B ...) so that drift hits every variant alike. Each
variant's epoch time is then the median over its repeats of each repeat's
median epoch. Each speedup is the median of the per-repeat ratios (the
baseline's repeat k over the variant's repeat k) with a 95 % interval by
bootstrap over those ratios (2000 resamples, fixed seed) when there are at
least 3 repeats; with fewer, the ratio of the epoch medians with a bootstrap
over epochs, marked "single run" for one run a variant. A run that failed,
was aborted by an OOM, crashed or was canceled gets no speedup; its figures
are marked partial. A run whose host was busy (load average above its CPUs,
or its threads waiting for a CPU over a third of their CPU time) is flagged
"host busy: timing unreliable".

Runs start one after the other by default, so they do not distort each
other's timings; --parallel starts them all at once. They run detached from
the terminal (new process session): closing it or losing the SSH connection
does not stop them. Each writes a journal in the session folder
($GNNSCOPE_HOME/sessions/ID/runs/NAME.jsonl) and its output to NAME.log.

Without --wait, run prints the session id and folder and returns at once.
With --wait it shows progress on stderr (run, epoch, loss, accuracy, ETA)
and ends with the comparison table on stdout, or with --json one JSON
object {"session", "dir", "runs": [...]}; it exits non-zero if a run did not
end ok. Ctrl-C stops waiting only; the runs go on. --attach ID waits for an
existing session the same way; --cancel ID stops a session's runs. ID is a
session id, a unique prefix of it, or "last" (the newest session).

Columns: epoch wall time (mean, sample sd, min, median, max) from the
recorded spans; stage totals over all lanes; data wait (time the trainer
waited for batches); overlap (stage time over wall time, 1 = sequential);
efficiency (ideal over actual wall time); speedup (the baseline's mean epoch
time over the run's); test accuracy at the best validation epoch; HIT RATE
and H2D/EPOCH (bytes host-to-device per epoch) for runs with a feature cache.

Spec file:
  name = "sage on synth-small"
  data = "synth-small"
  [split]                 # optional: mode (auto, per-class, frac), per_class,
  mode = "auto"           # num_valid, num_test, train_frac, valid_frac, seed
  [train]                 # any train config key
  model = "sage"
  hidden = 64
  fanouts = [15, 10]
  batch_size = 1024
  epochs = 3
  [variants.baseline]
  [variants.optimized]
  sampler_workers = 2
  prefetch = 4
  overlap_eval = true
  [variants.workers-only]
  sampler_workers = 2

Unknown keys or variants and bad values are refused before anything starts.`
}

// builtinHelp lists the built-in variants for the help text, one a line:
// name, what it changes and its overrides with the default settings (gas
// keeps the experiment's --parts where it sets them).
func builtinHelp() string {
	var b strings.Builder
	for i, v := range runner.Builtins() {
		over := v.Variant(runner.DefaultVariantParams()).Overrides
		keys := slices.Sorted(maps.Keys(over))
		set := make([]string, len(keys))
		for j, k := range keys {
			set[j] = fmt.Sprintf("%s = %v", k, over[k])
		}
		if len(set) == 0 {
			set = []string{"no overrides"}
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-13s %s: %s", v.Name, v.Help, strings.Join(set, ", "))
	}
	return b.String()
}
