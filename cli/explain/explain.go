package explain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// Output formats.
const (
	FormatText     = "text"
	FormatMarkdown = "md"
	FormatJSON     = "json"
)

// ExplainOptions are the inputs of `gnnscope explain`.
type ExplainOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Ref       string  // SESSION or SESSION/RUN
	Epochs    bool    // the ledger per epoch too
	TTATarget float64 // 0: 99 % of the baseline's best
	Baseline  string
	Format    string
	Output    string
	Force     bool
	Store     string
}

// NewCmdExplain returns `gnnscope explain`. With runF, the command calls it
// with the parsed options instead of explaining.
func NewCmdExplain(f *cmdutil.Factory, runF func(*ExplainOptions) error) *cobra.Command {
	opts := &ExplainOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "explain SESSION[/RUN] [--epochs] [--tta-target ACC] [--format text|md|json]",
		Short: "Say what held each run back: stage ledger, verdict, time to accuracy, advice",
		Long: `Explain the runs of a session (or one run) from their journals alone, so
that a session imported from an archive is explained as on the machine
that ran it.

The ledger splits each run's wall time by the stage the trainer's lane ran
or waited on: at every instant exactly one of sample, transfer (its cache
lookups shown apart), train (forward, backward, step), eval, other, idle
is exposed, so the exposed times add up to the wall time. Busy is the
union of a stage's spans over all lanes; hidden = busy - exposed is the
time the stage ran beside something else. An external run's sample is its
wait for the next batch (data loading); a distributed run has a ledger
per rank and the straggler's share.

The verdict names the stage with the largest exposed share of the time
after setup, or "mixed" when the two largest are within 10 points; the
advice judges the same time. Time to accuracy clocks each run from its
first touch of data (the first span after setup), evaluation included,
to the first evaluation at or above the target (--tta-target, else 99 %
of the best validation accuracy the baseline reached, the median over
its repeats); a run that never reaches it is not ranked.

The what-if table replays each run's recorded batches under another
schedule (a stage free, sampler workers with prefetch, evaluation
overlapped, a feature cache at the session's measured hit rate, else an
assumed 50 %) on the cores its host had. Every variant the session
measured is predicted from the baseline's runs and set beside its
measurement, unless it differs from the baseline in what the model does
not replay (then it says so). The waterfall splits the optimized
variant's speedup over the baseline among its optimizations: measured
where the session ran one alone (run --ablation), else predicted and
marked so, with the interaction as the remainder; in log-speedup the
parts and the interaction add up to the total. The advice lists the
rules that fired, with the figure that fired them, the flags to try and
what the what-if model predicts each would gain, never what the run
already does.`,
		Example: `  gnnscope explain last
  gnnscope explain 20261122-153045-ab12/baseline --epochs
  gnnscope explain last --tta-target 0.80 --format md`,
		Args: cmdutil.ExactArgs(1, "SESSION[/RUN]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(opts)
			}
			return explainRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Epochs, "epochs", false, "the ledger of every epoch too")
	fl.Float64Var(&opts.TTATarget, "tta-target", 0, "validation accuracy that time to accuracy counts to (0 = 99 % of the baseline's best)")
	fl.StringVar(&opts.Baseline, "baseline", "", "`RUN` time to accuracy is measured against (default: the baseline variant's, else the first)")
	fl.StringVarP(&opts.Format, "format", "f", FormatText, "output format: text, md or json")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of stdout (missing folders are created)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite FILE if it exists")
	fl.StringVar(&opts.Store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func explainRun(opts *ExplainOptions) error {
	switch opts.Format {
	case FormatText, FormatMarkdown, FormatJSON:
	default:
		return fmt.Errorf("--format %q: use text, md or json", opts.Format)
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
	ex, err := Load(store, opts.Ref, opts.Baseline)
	if err != nil {
		return err
	}
	est := newEstimates(ex)
	rep, err := analysis.Explain(ex.Runs, analysis.Options{Baseline: ex.Baseline, Target: opts.TTATarget, Gain: est.gain})
	if err != nil {
		return err
	}
	doc := &Document{Session: ex.Session, Skipped: ex.Skipped, Report: rep, Only: ex.Only,
		WhatIf: est.whatIf(), Waterfall: est.waterfall(), Ranks: ex.Ranks}
	return cmdutil.WriteOutput(opts.IO.Out, opts.Output, opts.Force, func(w io.Writer) error {
		return doc.Write(w, opts.Format, opts.Epochs)
	})
}

// Explained is what Load read: the runs analysed, in launch order.
type Explained struct {
	Session string
	Runs    []*analysis.Run
	// Traces are the runs' what-if records, one per run of Runs.
	Traces []*whatif.Trace
	// Variants are the session's variants in launch order; Parts the
	// optimizations of its optimized variant for the waterfall, and
	// PartsFrom where they come from.
	Variants  []string
	Parts     []whatif.PartConfig
	PartsFrom string
	Baseline  string   // the run time to accuracy is measured against
	Only      string   // the run asked for (SESSION/RUN), "" for a session
	Skipped   []string // runs without a journal, with the reason
	// Ranks are where the distributed runs' ranks ran.
	Ranks []RunRanks
}

// Load resolves SESSION or SESSION/RUN and analyses the runs' journals.
// For one run, the session's baseline run is analysed too (for the
// default accuracy target) when it is another run.
func Load(store *sessions.Store, ref, baseline string) (*Explained, error) {
	refs, err := store.SelectRuns([]string{ref})
	if err != nil {
		return nil, err
	}
	s := refs[0].Session
	if baseline != "" {
		if baseline, err = s.MatchRun(baseline); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
	}
	ex := &Explained{Session: s.ID(), Baseline: baseline}
	for _, v := range s.Meta.Variants {
		ex.Variants = append(ex.Variants, v.Name)
	}
	if _, run := sessions.ParseRunRef(ref); run != "" {
		ex.Only = refs[0].Run
		if baseline == "" {
			baseline = baselineRun(s)
		}
		if baseline != "" && baseline != ex.Only {
			refs = append([]sessions.RunRef{{Session: s, Run: baseline}}, refs...)
			ex.Baseline = baseline
		}
	}
	for _, r := range refs {
		run, tr, err := analyse(s, r.Run)
		if errors.Is(err, fs.ErrNotExist) && r.Run == ex.Only {
			return nil, fmt.Errorf("run %s: no journal (not started)", r.Run)
		}
		if errors.Is(err, fs.ErrNotExist) {
			ex.Skipped = append(ex.Skipped, r.Run+": no journal (not started)")
			continue
		}
		if err != nil {
			return nil, err
		}
		ex.Runs = append(ex.Runs, run)
		ex.Traces = append(ex.Traces, tr)
		if nodes := rankNodes(s, r.Run); nodes != nil {
			ex.Ranks = append(ex.Ranks, RunRanks{Run: r.Run, Ranks: nodes})
		}
	}
	ex.Parts, ex.PartsFrom = waterfallParts(s, ex)
	if len(ex.Runs) == 0 {
		return nil, fmt.Errorf("%s: no run has a journal yet", ref)
	}
	return ex, nil
}

// baselineRun returns the session's baseline run by name: "baseline",
// else its first repeat; "" when there is none.
func baselineRun(s *sessions.Session) string {
	runs, err := s.OrderedRuns()
	if err != nil {
		return ""
	}
	for _, r := range runs {
		if r == profile.VariantBaseline {
			return r
		}
	}
	for _, r := range runs {
		if strings.HasPrefix(r, profile.VariantBaseline+".r") {
			return r
		}
	}
	return ""
}

// analyse streams one run's journals (every rank's) through the analysis
// and the what-if records in one pass.
func analyse(s *sessions.Session, run string) (*analysis.Run, *whatif.Trace, error) {
	b, wb := analysis.NewRunBuilder(), whatif.NewBuilder()
	if _, err := s.ScanRun(run, func(e *profile.Event) error { b.Add(e); wb.Add(e); return nil }); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", run, err)
	}
	r := b.Run()
	r.Name = run // the session's name for it, whatever its run_start says
	if r.Status == "" {
		if st, err := s.RunState(run); err == nil {
			r.Status = st.Status
		}
	}
	tr := wb.Trace()
	tr.Run = run
	if tr.Variant == "" {
		tr.Variant = r.Variant
	}
	if tr.Status == "" {
		tr.Status = r.Status
	}
	tr.Repeat = sessions.RepeatNumber(run, tr.Variant)
	return r, tr, nil
}

// waterfallParts returns the optimizations of the session's optimized
// variant (runner.WaterfallParts), else, for a session that recorded no
// experiment, every other variant it ran; and where they come from.
func waterfallParts(s *sessions.Session, ex *Explained) ([]whatif.PartConfig, string) {
	if parts, err := runner.WaterfallParts(s); err == nil {
		return parts, "the optimizations of the optimized variant"
	}
	ws := whatif.Session{}
	for _, t := range ex.Traces {
		ws.Add(t)
	}
	return ws.PartsOf(ex.Variants, profile.VariantBaseline, optimizedVariant), "the session's other variants (it recorded no experiment)"
}
