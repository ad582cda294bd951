package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// runFlags holds the flags of `gnnscope run`.
type runFlags struct {
	trainFlags
	spec     string
	variants []string
	parallel bool
	wait     bool
	cancel   string
	attach   string
}

func newRunCmd() *cobra.Command {
	cmd, _ := newRunCmdFlags()
	return cmd
}

// newRunCmdFlags builds the run command and returns the flags it fills.
func newRunCmdFlags() (*cobra.Command, *runFlags) {
	f := &runFlags{trainFlags: trainFlags{cfg: runner.NewExperiment("", "sage").Train}}
	cmd := &cobra.Command{
		Use:   "run [train flags] [--spec FILE] [--variants LIST] [--parallel] [--wait [--json]]",
		Short: "Launch baseline and optimized runs of an experiment in the background and compare them",
		Long: `Launch one run per variant of an experiment as background worker processes
and, with --wait, follow them and print a comparison table.

The experiment is the dataset, its split and the training config, given
either by the same flags as 'gnnscope train' (the model defaults to sage:
the optimized schedule pipelines neighbor-sampled mini-batches) or by a TOML
spec file (--spec); flags you set on the command line override the spec.

Variants are named overrides of the config. Built in:
  baseline    no overrides: sampling on the training goroutine, evaluation after training
  optimized   sampler_workers = 2, prefetch = 4, overlap_eval = true
A spec may define its own in [variants.NAME] tables (any train config key,
JSON names); --variants picks among them and the built-in ones (default:
the spec's variants, else baseline,optimized). Each variant becomes one run
of the same name.

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
time over the run's); test accuracy at the best validation epoch.

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

Unknown keys, bad values and unknown variants are refused before anything
starts.`,
		Example: `  gnnscope run --data synth-small --epochs 5 --wait
  gnnscope run --data cora.npz --model sage --fanout 25,10 --variants baseline,optimized --wait --json
  gnnscope run --spec sage.toml --variants baseline,workers-only --parallel
  gnnscope run --attach 20261122-153045-ab12
  gnnscope run --cancel 20261122-153045-ab12
  gnnscope run --cancel last`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd, f)
		},
	}
	fl := cmd.Flags()
	f.trainFlags.register(fl, "sage")
	fl.StringVar(&f.spec, "spec", "", "TOML spec file with the experiment and its variants")
	fl.StringSliceVar(&f.variants, "variants", nil, "variants to run, comma-separated (default: the spec's, else baseline,optimized)")
	fl.BoolVar(&f.parallel, "parallel", false, "start every run at once instead of one after the other")
	fl.BoolVar(&f.wait, "wait", false, "follow the runs, then print the comparison table")
	fl.BoolVar(&f.json, "json", false, "print JSON on stdout (with --wait: the comparison)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	fl.StringVar(&f.cancel, "cancel", "", "cancel the runs of session `ID` (running ones get SIGTERM, pending ones never start)")
	fl.StringVar(&f.attach, "attach", "", "wait for the runs of an existing session `ID`, then compare them")
	return cmd, f
}

// flagKeyExceptions names the train config keys of the training flags whose
// key is not the flag's name with dashes turned into underscores.
var flagKeyExceptions = map[string]string{"fanout": "fanouts", "act": "activation"}

// flagConfigKey returns the train config key a training flag sets, or ""
// when the flag is not a config key (--data, --split, --json ...).
func flagConfigKey(name string) string {
	key, ok := flagKeyExceptions[name]
	if !ok {
		key = strings.ReplaceAll(name, "-", "_")
	}
	if !slices.Contains(runner.ConfigKeys(), key) {
		return ""
	}
	return key
}

// configValues returns every field of cfg by its config key, zero values
// included (the JSON form omits some of those).
func configValues(cfg train.Config) map[string]any {
	v := reflect.ValueOf(cfg)
	t := v.Type()
	out := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !t.Field(i).IsExported() {
			continue
		}
		out[name] = v.Field(i).Interface()
	}
	return out
}

func runRun(cmd *cobra.Command, f *runFlags) error {
	fl := cmd.Flags()
	if f.cancel != "" || f.attach != "" {
		for _, name := range []string{"spec", "variants", "parallel", "wait"} {
			if fl.Changed(name) {
				return fmt.Errorf("--%s does not go with --cancel or --attach", name)
			}
		}
		if f.cancel != "" && f.attach != "" {
			return errors.New("give --cancel or --attach, not both")
		}
	}
	store, err := sessions.Open("")
	if err != nil {
		return err
	}
	if f.cancel != "" {
		return runCancel(cmd, store, f)
	}
	if f.attach != "" {
		s, err := store.MatchSession(f.attach)
		if err != nil {
			return err
		}
		return waitAndCompare(cmd, s, f)
	}
	exp, defined, err := runExperiment(fl, f)
	if err != nil {
		return err
	}
	variants, err := runner.SelectVariants(defined, f.variants)
	if err != nil {
		return err
	}
	s, err := runner.Launch(store, exp, variants, runner.LaunchOptions{Parallel: f.parallel})
	if err != nil {
		if s != nil {
			return fmt.Errorf("session %s (%s): %w", s.ID(), s.Dir(), err)
		}
		return err
	}
	if f.wait {
		return waitAndCompare(cmd, s, f)
	}
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	if f.json {
		t, err := runner.Compare(s)
		if err != nil {
			return err
		}
		return writeJSON(cmd.OutOrStdout(), t)
	}
	how := "one after the other"
	if f.parallel {
		how = "all at once"
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "session %s\nfolder  %s\n", s.ID(), s.Dir())
	if !f.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "%d runs (%s) started %s in the background.\n  follow: gnnscope run --attach %s\n  cancel: gnnscope run --cancel %s\n",
			len(names), strings.Join(names, ", "), how, s.ID(), s.ID())
	}
	return nil
}

// runExperiment builds the experiment from the spec (if any) and the
// flags; it returns the spec's variants.
func runExperiment(fl *pflag.FlagSet, f *runFlags) (runner.Experiment, []runner.Variant, error) {
	if f.spec == "" {
		applyModelDefaults(fl, &f.cfg, &f.fanout)
		fan, err := parseInts(f.fanout)
		if err != nil {
			return runner.Experiment{}, nil, fmt.Errorf("--fanout: %w", err)
		}
		f.cfg.Fanouts = fan
		if err := flagsApply(fl, f.cfg); err != nil {
			return runner.Experiment{}, nil, err
		}
		exp := runner.Experiment{Data: f.data, NoCache: f.noCache, Train: f.cfg}
		exp.Split = f.trainFlags.experimentSplit(fl, runner.DefaultSplit())
		return exp, nil, exp.Validate()
	}
	spec, err := runner.LoadSpec(f.spec)
	if err != nil {
		return runner.Experiment{}, nil, err
	}
	exp := spec.Experiment
	if fl.Changed("data") {
		exp.Data = f.data
	}
	if fl.Changed("no-cache") {
		exp.NoCache = f.noCache
	}
	exp.Split = f.trainFlags.experimentSplit(fl, exp.Split)
	// train flags set on the command line override the spec's [train]
	over := map[string]any{}
	all := configValues(f.cfg)
	var ferr error
	fl.Visit(func(flag *pflag.Flag) {
		key := flagConfigKey(flag.Name)
		if key == "" || ferr != nil {
			return
		}
		if flag.Name == "fanout" {
			fan, err := parseInts(f.fanout)
			if err != nil {
				ferr = fmt.Errorf("--fanout: %w", err)
				return
			}
			over[key] = fan
			return
		}
		over[key] = all[key]
	})
	if ferr != nil {
		return exp, nil, ferr
	}
	if exp.Train, err = runner.ApplyOverrides(exp.Train, over); err != nil {
		return exp, nil, fmt.Errorf("%s with the command-line flags: %w", f.spec, err)
	}
	return exp, spec.Variants, exp.Validate()
}

// runCancel cancels a session and waits (a while) for its runs to end.
func runCancel(cmd *cobra.Command, store *sessions.Store, f *runFlags) error {
	s, err := store.MatchSession(f.cancel)
	if err != nil {
		return err
	}
	rep, err := runner.Cancel(store, s.ID())
	if rep == nil {
		return err
	}
	errw := cmd.ErrOrStderr()
	if !f.quiet && !f.json {
		if len(rep.Signaled) > 0 {
			fmt.Fprintf(errw, "sent SIGTERM to %s\n", strings.Join(rep.Signaled, ", "))
		}
		if len(rep.Marked) > 0 {
			fmt.Fprintf(errw, "will not start: %s\n", strings.Join(rep.Marked, ", "))
		}
	}
	// Give the workers time to close their journals.
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt)
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	var states []sessions.RunState
	for {
		var serr error
		states, serr = runner.RunStates(s)
		if serr != nil || !runner.Active(states) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if f.json {
		if werr := writeJSON(cmd.OutOrStdout(), struct {
			*runner.CancelReport
			Runs []sessions.RunState `json:"runs"`
		}{rep, states}); werr != nil {
			return werr
		}
	} else {
		out := cmd.OutOrStdout()
		if len(rep.Signaled) == 0 && len(rep.Marked) == 0 && !rep.Sequencer {
			fmt.Fprintf(out, "session %s: nothing to cancel\n", s.ID())
		} else {
			fmt.Fprintf(out, "session %s canceled\n", s.ID())
		}
		for _, r := range states {
			fmt.Fprintf(out, "  %-16s %s\n", r.Run, r.Status)
		}
	}
	if err != nil {
		return err
	}
	if runner.Active(states) {
		return fmt.Errorf("some runs of session %s have not stopped yet", s.ID())
	}
	return nil
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// waitAndCompare follows a session's runs until none is running or
// pending, then prints the comparison. Ctrl-C stops waiting only.
func waitAndCompare(cmd *cobra.Command, s *sessions.Session, f *runFlags) error {
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt)
	defer stop()
	if err := followRuns(ctx, s, cmd.ErrOrStderr(), f.quiet); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stopped waiting; the runs go on in the background.\n  follow again: gnnscope run --attach %s\n  cancel them:  gnnscope run --cancel %s", s.ID(), s.ID())
		}
		return err
	}
	t, err := runner.Compare(s)
	if err != nil {
		return err
	}
	if f.json {
		err = writeJSON(cmd.OutOrStdout(), t)
	} else {
		err = t.Render(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	bad := 0
	for _, r := range t.Runs {
		if r.Status != profile.StatusOK {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d runs did not end ok (see the run logs in %s)", bad, len(t.Runs), s.RunsDir())
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runProgress is what the journal tells about a run while it goes.
type runProgress struct {
	status string
	tail   *sessions.Tailer
	epochs int       // total, from run_start's config
	start  time.Time // run_start's wall clock
	epoch  int       // last epoch with a loss
	loss   float64
	val    float64
	hasVal bool
	done   time.Time // when the last epoch ended (by this clock)
}

func (p *runProgress) add(evs []profile.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.T {
		case profile.TypeRunStart:
			var cfg struct {
				Epochs int `json:"epochs"`
			}
			if json.Unmarshal(e.Config, &cfg) == nil {
				p.epochs = cfg.Epochs
			}
			if t, err := e.WallTime(); err == nil {
				p.start = t
			}
		case profile.TypeMetric:
			switch e.Name {
			case "loss":
				if e.Epoch >= p.epoch {
					p.epoch, p.loss, p.done = e.Epoch, e.Value, time.Now()
				}
			case "val_acc":
				p.val, p.hasVal = e.Value, true
			}
		case profile.TypeRunEnd:
			p.status = e.Status
		}
	}
}

// line is the run's part of the progress line.
func (p *runProgress) line(run string) string {
	switch p.status {
	case sessions.StatusRunning:
	default:
		return run + " " + p.status
	}
	if p.epoch == 0 {
		return run + " starting"
	}
	s := fmt.Sprintf("%s epoch %d", run, p.epoch)
	if p.epochs > 0 {
		s += fmt.Sprintf("/%d", p.epochs)
	}
	s += fmt.Sprintf(" loss %.4f", p.loss)
	if p.hasVal {
		s += fmt.Sprintf(" val %.3f", p.val)
	}
	if p.epochs > p.epoch && !p.start.IsZero() {
		per := p.done.Sub(p.start) / time.Duration(p.epoch)
		eta := per * time.Duration(p.epochs-p.epoch)
		s += " ETA " + eta.Round(time.Second).String()
	}
	return s
}

// followRuns polls the session's run states and tails their journals,
// showing progress on w, until no run is running or pending, or ctx is
// done.
func followRuns(ctx context.Context, s *sessions.Session, w io.Writer, quiet bool) error {
	prog := newProgress(w, quiet)
	runs := map[string]*runProgress{}
	defer func() {
		for _, p := range runs {
			if p.tail != nil {
				p.tail.Close()
			}
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		states, err := runner.RunStates(s)
		if err != nil {
			return err
		}
		parts := make([]string, 0, len(states))
		for _, st := range states {
			p := runs[st.Run]
			if p == nil {
				p = &runProgress{}
				runs[st.Run] = p
			}
			if p.tail == nil && st.Size > 0 {
				if p.tail, err = s.TailRun(st.Run, sessions.TailOptions{}); err != nil {
					return err
				}
			}
			if p.tail != nil {
				evs, err := p.tail.Poll()
				if err != nil {
					return err
				}
				p.add(evs)
			}
			was := p.status
			p.status = st.Status // the journal's run_end, or the process's state
			if p.status != was && was != "" && p.status != sessions.StatusRunning && p.status != runner.StatusPending {
				prog.printf("%s: %s\n", st.Run, p.status)
			}
			parts = append(parts, p.line(st.Run))
		}
		active := runner.Active(states)
		prog.line(!active, "%s", strings.Join(parts, " | "))
		if !active {
			prog.done()
			return nil
		}
		select {
		case <-ctx.Done():
			prog.done()
			return ctx.Err()
		case <-tick.C:
		}
	}
}
