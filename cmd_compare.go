package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

type compareFlags struct {
	format   string
	json     bool
	baseline string
	output   string
	store    string
}

func newCompareCmd() *cobra.Command {
	f := &compareFlags{}
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
  OOMs                                oom events
  staleness mean, max                 age of pulled history rows in optimizer
                                      steps (stale events; blank without them)
  history rel. error, history memory  GNNAutoScale histories: relative error at
                                      the last refresh, largest over layers
                                      (hist_err events), and host bytes
  test accuracy                       the run's result, else its last test_acc
  speedup                             the baseline's mean epoch time over the run's

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
  gnnscope compare 20261122-153045-ab12 --format csv > runs.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", sessions.FormatMarkdown, "output format: "+strings.Join(sessions.Formats, ", "))
	fl.BoolVar(&f.json, "json", false, "same as --format json")
	fl.StringVar(&f.baseline, "baseline", "", "run the speedups are relative to: `RUN` or SESSION/RUN")
	fl.StringVarP(&f.output, "output", "o", "", "write to `FILE` instead of stdout")
	fl.StringVar(&f.store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func runCompare(cmd *cobra.Command, args []string, f *compareFlags) error {
	format := f.format
	if f.json {
		if cmd.Flags().Changed("format") && format != sessions.FormatJSON {
			return errors.New("--json and --format " + format + " contradict each other")
		}
		format = sessions.FormatJSON
	}
	if err := sessions.CheckFormat(format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	store, err := sessions.Open(f.store)
	if err != nil {
		return err
	}
	c, err := compareRuns(store, args, f.baseline)
	if err != nil {
		return err
	}
	return writeOutput(cmd.OutOrStdout(), f.output, func(w io.Writer) error { return c.Write(w, format) })
}

// compareRuns resolves the arguments and the baseline and compares the
// runs. Runs a launch has not started yet are reported as runner sees them
// (pending, canceled or not started).
func compareRuns(store *sessions.Store, args []string, baseline string) (*sessions.Comparison, error) {
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
	c, err := runner.CompareRuns(refs, sessions.CompareOptions{Baseline: baseline})
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return c, nil
}

// writeOutput runs write on stdout, or on a temporary file renamed to
// path once complete (so a failed write leaves no half file).
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	return sessions.WriteFileAtomic(path, 0o644, write)
}
