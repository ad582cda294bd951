package export

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
)

// NewCmdExport returns `gnnscope export`; each kind is a subcommand.
func NewCmdExport(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export KIND ...",
		Short: "Export sessions to other tools (trace: Chrome/Perfetto trace)",
		Long: `Export what sessions recorded to other tools. Kinds:
  trace   a Chrome Trace Event JSON file for ui.perfetto.dev or chrome://tracing

For comparison tables (Markdown, CSV, LaTeX, JSON) see 'gnnscope compare'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdTrace(f, nil))
	return cmd
}

// TraceOptions are the inputs of `gnnscope export trace`.
type TraceOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	// Runs are the SESSION or SESSION/RUN arguments.
	Runs      []string
	Output    string
	WallClock bool
	Force     bool
	Quiet     bool
	Store     string
}

// NewCmdTrace returns `gnnscope export trace`. With runF, the command
// calls it with the parsed options instead of exporting.
func NewCmdTrace(f *cmdutil.Factory, runF func(*TraceOptions) error) *cobra.Command {
	opts := &TraceOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "trace SESSION[/RUN] ... [-o FILE] [--wall-clock]",
		Short: "Write runs as a Chrome Trace Event file for ui.perfetto.dev or chrome://tracing",
		Long: `Write the runs' journals as one Chrome Trace Event JSON file. SESSION alone
stands for all its runs, SESSION/RUN for one; ids and names may be
abbreviated to a unique prefix, and "last" is the newest session.

Open the file at https://ui.perfetto.dev (Open trace file) or in
chrome://tracing (Load). In it:
  - one process per run, named "RUN (variant V, session S)";
  - one thread per lane (compute, copy, eval, sampler/0, ...): every span
    of the run as a slice, with epoch, batch and attrs as arguments. Spans
    that overlap on a lane without nesting (an overlapped evaluation, a
    prefetched batch) go on extra tracks "compute #2", ...; a train span
    and its forward/backward/step children stay together;
  - counters: memory (peak, live, budget, predicted), gpu used and
    utilization, staleness, history error and every metric (loss,
    batch_loss, val_acc, ...);
  - instant events for OOMs (failed allocations), the memory guard's
    actions ("guard (split)": nothing failed) and the end of the run.

The default FILE is ID-trace.json in the current folder, ID being the
first session's; an existing file is refused unless --force is given, and
missing folders are created.

Runs all start at time zero so they line up; --wall-clock places them at
their wall-clock start instead (runs launched one after the other then
follow each other). Journals are read one event at a time; damaged lines
are skipped and counted.`,
		Example: `  gnnscope export trace last -o trace.json
  gnnscope export trace 20261122-153045-ab12 -o trace.json
  gnnscope export trace 20261122-153045-ab12/optimized -o optimized.json
  gnnscope export trace 20261122-1530 20261123-0915 --wall-clock -o both.json
  gnnscope export trace 20261122-153045-ab12 -o - | gzip > trace.json.gz`,
		Args: cmdutil.MinimumArgs(1, "SESSION[/RUN] ... (gnnscope sessions lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			if runF != nil {
				return runF(opts)
			}
			return traceRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "write to `FILE` (default ID-trace.json; - for stdout)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite FILE if it exists")
	fl.BoolVar(&opts.WallClock, "wall-clock", false, "place runs at their wall-clock start instead of all at zero")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no summary on stderr")
	fl.StringVar(&opts.Store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func traceRun(opts *TraceOptions) error {
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	refs, err := store.SelectRuns(opts.Runs)
	if err != nil {
		return err
	}
	if opts.Output == "" && len(refs) > 0 {
		opts.Output = refs[0].Session.ID() + "-trace.json"
	}
	if err := cmdutil.CheckOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	tr, sum, err := sessions.BuildTrace(refs, sessions.TraceOptions{WallClock: opts.WallClock})
	if errors.Is(err, sessions.ErrNoJournal) {
		return fmt.Errorf("nothing to export: %w", err)
	}
	if err != nil {
		return err
	}
	var written int64
	err = cmdutil.WriteOutput(opts.IO.Out, opts.Output, opts.Force, func(w io.Writer) error {
		n, err := tr.WriteTo(w)
		written = n
		return err
	})
	if err != nil {
		return err
	}
	if !opts.Quiet && opts.Output != "-" {
		msg := fmt.Sprintf("wrote %s: %d runs, %d spans, %s", opts.Output, sum.Runs, sum.Spans, units.BytesFine(written))
		if sum.Malformed > 0 {
			msg += fmt.Sprintf(" (%d damaged journal lines skipped)", sum.Malformed)
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s\nopen it at https://ui.perfetto.dev or in chrome://tracing\n", msg)
	}
	return nil
}
