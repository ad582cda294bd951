package compare

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// CompareOptions are the inputs of `gnnscope compare`.
type CompareOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	// Runs are the SESSION or SESSION/RUN arguments.
	Runs      []string
	Format    string
	FormatSet bool // --format given on the command line
	JSON      bool
	Baseline  string
	Output    string
	Force     bool
	Store     string
	// TTATarget is the validation accuracy time to accuracy counts to
	// (0: 99 % of the baseline's best).
	TTATarget float64
}

// NewCmdCompare returns `gnnscope compare`. With runF, the command calls it
// with the parsed options instead of comparing.
func NewCmdCompare(f *cmdutil.Factory, runF func(*CompareOptions) error) *cobra.Command {
	opts := &CompareOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "compare SESSION[/RUN] ... [--format md|csv|latex|json] [--baseline RUN] [-o FILE]",
		Short: "Compare runs of one or several sessions side by side (Markdown, CSV, LaTeX, JSON)",
		Long: `Put runs side by side: SESSION alone stands for all its runs (in launch
order), SESSION/RUN for one. Session ids and run names may be abbreviated to
a unique prefix; "last" is the newest session.

The table starts with the configuration keys whose values differ between
the compared runs (sampler_workers, prefetch, overlap_eval, dataset, ...),
then, per run:
  status, epochs
  epoch mean, min, median, max, std   epoch wall time in seconds (the time
                                      each epoch adds to the run)
  sample, transfer, train, eval       stage totals over all lanes, seconds
  data wait                           time the trainer waited for batches
  overlap                             stage time over wall time (1 = sequential)
  efficiency                          ideal over actual wall time
  peak memory, p99 memory             largest per-batch peak and the 99th
                                      percentile of per-batch peaks (mem events;
                                      blank without them)
  OOMs                                oom events: allocations that failed
  guard actions                       guard events: batches the memory guard
                                      split, cut or re-drew so that nothing
                                      failed (not OOMs)
  staleness mean, max                 age of pulled history rows in optimizer
                                      steps (stale events; blank without them)
  history rel. error, history memory  GNNAutoScale histories: relative error at
                                      the last refresh, largest over layers
                                      (hist_err events), and host bytes
  test accuracy                       the run's result, else its last test_acc
  status                              ", partial" for a run that failed, was
                                      aborted by an OOM, crashed or was canceled
  variant median (s)                  median over the variant's repeats of each
                                      repeat's median epoch time
  speedup                             the baseline variant's over the run
                                      variant's, with its 95 % interval: a
                                      bootstrap over the per-repeat ratios (3+
                                      repeats NAME.rK; the speedup is then
                                      their median); with fewer, no interval
                                      (epochs of one run are not independent),
                                      "single run" for one run a side; none for
                                      a run that stopped early
  per-repeat speedups                 baseline repeat k over the run's repeat k
  host                                busy when the load average exceeded the
                                      CPUs or the run waited for a CPU over a
                                      third of its CPU time: timing unreliable
  cache hit rate, H2D per epoch       the feature cache (cache events; rows
                                      shown only when a run has them): rows
                                      found on the device over all input rows,
                                      bytes copied host-to-device per epoch
                                      (mean), and the hit rate by epoch (md,
                                      latex; json: cache_epochs)

Time to accuracy (rows and notes when runs recorded validation accuracy)
counts from the first touch of data to the first evaluation at or above
--tta-target, else 99 % of the best validation accuracy the baseline
reached; a run that never reaches it says so and has no speedup to
accuracy.

The baseline is --baseline (a run name or SESSION/RUN, which is added to
the comparison if it is not already in it), else the run of variant
baseline, else the first run.

Formats: md (default: a GitHub table, runs as columns), csv (one record per
run, bytes as integers), latex (a tabular environment only, plain \hline
rules, to \input into a document), json (one object with every figure).
Seconds have 3 decimals, ratios 3, accuracy 4.`,
		Example: `  gnnscope compare last
  gnnscope compare 20261122-153045-ab12
  gnnscope compare 20261122-1530 --format latex -o table.tex
  gnnscope compare 20261122-153045-ab12/optimized 20261123-091500-cd34/optimized --baseline 20261122-153045-ab12/baseline
  gnnscope compare 20261122-153045-ab12 --format csv > runs.csv
  gnnscope compare last --tta-target 0.80`,
		Args: cmdutil.MinimumArgs(1, "SESSION[/RUN] ... (gnnscope sessions lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			opts.FormatSet = cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			return compareRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Format, "format", "f", sessions.FormatMarkdown, "output format: "+strings.Join(sessions.Formats, ", "))
	fl.BoolVar(&opts.JSON, "json", false, "same as --format json")
	fl.StringVar(&opts.Baseline, "baseline", "", "run the speedups are relative to: `RUN` or SESSION/RUN")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of stdout (missing folders are created)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite FILE if it exists")
	fl.Float64Var(&opts.TTATarget, "tta-target", 0, "validation accuracy that time to accuracy counts to (0 = 99 % of the baseline's best)")
	fl.StringVar(&opts.Store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func compareRun(opts *CompareOptions) error {
	format := opts.Format
	if opts.JSON {
		if opts.FormatSet && format != sessions.FormatJSON {
			return errors.New("--json and --format " + format + " contradict each other")
		}
		format = sessions.FormatJSON
	}
	if err := sessions.CheckFormat(format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if opts.TTATarget < 0 || opts.TTATarget > 1 {
		return fmt.Errorf("--tta-target %g: an accuracy between 0 and 1", opts.TTATarget)
	}
	if err := cmdutil.CheckOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	c, err := compareRuns(store, opts.Runs, sessions.CompareOptions{Baseline: opts.Baseline, TTATarget: opts.TTATarget})
	if err != nil {
		return err
	}
	return cmdutil.WriteOutput(opts.IO.Out, opts.Output, opts.Force, func(w io.Writer) error { return c.Write(w, format) })
}

// compareRuns resolves the arguments and the baseline (opts.Baseline)
// and compares the runs with the waterfall. Runs a launch has not started
// yet are reported as runner sees them (pending, canceled or not
// started).
func compareRuns(store *sessions.Store, args []string, opts sessions.CompareOptions) (*sessions.Comparison, error) {
	baseline := opts.Baseline
	refs, err := store.SelectRuns(args)
	if err != nil {
		return nil, err
	}
	if baseline != "" && strings.Contains(baseline, "/") {
		b, err := store.SelectRuns([]string{baseline})
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		if len(b) != 1 {
			return nil, fmt.Errorf("--baseline %s: name one run, as SESSION/RUN", baseline)
		}
		found := false
		for _, r := range refs {
			found = found || r.Label() == b[0].Label()
		}
		if !found {
			refs = append(b, refs...)
		}
		baseline = b[0].Label()
	}
	opts.Baseline, opts.Waterfall = baseline, runner.WaterfallOptions()
	c, err := runner.CompareRuns(refs, opts)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return c, nil
}
