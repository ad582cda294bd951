package sessions

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// NewCmdSessions returns `gnnscope sessions` and its subcommands; without
// a subcommand it lists the sessions (as `sessions ls`).
func NewCmdSessions(f *cmdutil.Factory) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:     "sessions [ls|show|rm|export|import]",
		Aliases: []string{"session"},
		Short:   "List, show, delete, export and import saved sessions",
		Long: `Browse the sessions in the store ($GNNSCOPE_HOME, else the XDG data folder
gnnscope/; --store picks another). Every 'gnnscope run' makes one session:
a folder with the experiment (session.json), how its runs were launched
(launch.json), and one journal and log per run.

Without a subcommand, 'sessions' lists them (as 'sessions ls').

A SESSION argument is a session id, a unique prefix of one, or "last" for
the newest.`,
		Example: `  gnnscope sessions
  gnnscope sessions show last
  gnnscope sessions export 20261122-153045-ab12 -o cora-sage.tar.gz
  gnnscope sessions import cora-sage.tar.gz
  gnnscope sessions rm 20261122-153045-ab12 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			return listRun(opts)
		},
	}
	cmd.PersistentFlags().String("store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	addListFlags(cmd, opts)
	cmd.AddCommand(
		NewCmdLs(f, nil),
		NewCmdShow(f, nil),
		NewCmdRm(f, nil),
		NewCmdExport(f, nil),
		NewCmdImport(f, nil),
	)
	return cmd
}

// ListOptions are the inputs of `gnnscope sessions ls`.
type ListOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Store   string
	JSON    bool
	Reverse bool
}

func addListFlags(cmd *cobra.Command, opts *ListOptions) {
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array")
	cmd.Flags().BoolVarP(&opts.Reverse, "reverse", "r", false, "newest first")
}

// NewCmdLs returns `gnnscope sessions ls`. With runF, the command calls it
// with the parsed options instead of listing.
func NewCmdLs(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the sessions, oldest first (newest last, next to the prompt)",
		Long: `List the sessions of the store, one line each, oldest first so the newest
is right above the prompt (-r: newest first):

  ID        the session id (its creation time, UTC, and a random suffix)
  CREATED   creation time (local)
  STATUS    running if a run is running or waiting to start; otherwise
            crashed, oom, failed, partial (its journal lost events, as
            on a full disk), canceled or unknown if a run ended so (the
            first of these that applies); else ok
  VARIANTS  the session's runs
  DATA, MODEL
  BASE s    mean epoch time of the baseline run (the run named baseline,
            else the first)
  BEST s    mean epoch time of the fastest other run
  SPEEDUP   the baseline's mean epoch time over the best run's, and which
            run that is
  TEST ACC  test accuracy (at the best validation epoch) of the baseline,
            and of the best run after a slash

Figures come from the runs' journals, as in 'gnnscope sessions show'.
--json prints an array with every run's figures.`,
		Example: `  gnnscope sessions ls
  gnnscope sessions ls -r --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	addListFlags(cmd, opts)
	return cmd
}

// Entry is one session of `sessions ls`.
type Entry struct {
	ID       string         `json:"id"`
	Name     string         `json:"name,omitempty"`
	Created  time.Time      `json:"created"`
	Status   profile.Status `json:"status"`
	Variants []string       `json:"variants"`
	Data     string         `json:"data,omitempty"`
	Model    string         `json:"model,omitempty"`
	Imported bool           `json:"imported,omitempty"`
	Dir      string         `json:"dir"`

	// Key figures: the baseline, the best other run (highest speedup;
	// never a run that failed, was aborted by an OOM, crashed or was
	// canceled; a variant's name when its runs are repeats) and the
	// speedup of the best over the baseline with its 95 % interval and
	// per-repeat ratios (see sessions.RunFigures). Epoch times are the
	// variants' medians.
	Baseline       string    `json:"baseline,omitempty"`
	BaselineEpochS float64   `json:"baseline_epoch_s,omitempty"`
	BaselineAcc    *float64  `json:"baseline_test_acc,omitempty"`
	Best           string    `json:"best,omitempty"`
	BestEpochS     float64   `json:"best_epoch_s,omitempty"`
	BestAcc        *float64  `json:"best_test_acc,omitempty"`
	Speedup        float64   `json:"speedup,omitempty"`
	SpeedupLo      float64   `json:"speedup_lo,omitempty"`
	SpeedupHi      float64   `json:"speedup_hi,omitempty"`
	SpeedupMethod  string    `json:"speedup_method,omitempty"`
	SpeedupRatios  []float64 `json:"speedup_ratios,omitempty"`
	SingleRun      bool      `json:"single_run,omitempty"`

	Runs  []sessions.RunFigures `json:"runs"`
	Error string                `json:"error,omitempty"`
}

// describeSession builds a session's list entry; errors go into Error.
func describeSession(store *sessions.Store, info sessions.SessionInfo) Entry {
	e := Entry{ID: info.ID, Name: info.Name, Created: info.Created, Dir: info.Dir, Variants: []string{}, Runs: []sessions.RunFigures{}, Error: info.Err}
	for _, v := range info.Variants {
		e.Variants = append(e.Variants, v.Name)
	}
	if info.Broken != "" {
		e.Status = sessions.StatusBroken // sessions rm ID removes it
		return e
	}
	s, err := store.Get(info.ID)
	if err != nil {
		e.Status, e.Error = profile.StatusError, err.Error()
		return e
	}
	if ii, _ := s.ImportInfo(); ii != nil {
		e.Imported = true
	}
	if exp, _, err := runner.LoadSession(s); err == nil {
		e.Data, e.Model = exp.Data, string(exp.Train.Model)
	}
	t, err := runner.Compare(s)
	if err != nil && e.Error == "" {
		e.Error = err.Error()
	}
	e.Runs = t.Runs
	statuses := make([]profile.Status, len(t.Runs))
	for i, r := range t.Runs {
		statuses[i] = r.Status
		if len(info.Variants) == 0 {
			e.Variants = append(e.Variants, r.Run)
		}
	}
	e.Status = runner.SessionStatus(statuses)
	e.Baseline = t.Baseline
	for _, r := range t.Runs {
		if r.Run == t.Baseline {
			e.BaselineEpochS, e.BaselineAcc = r.VariantMedianS, r.TestAcc
		}
	}
	c := sessions.Comparison{Baseline: t.Baseline, Runs: t.Runs}
	if best := c.BestRun(); best >= 0 {
		r := t.Runs[best]
		e.Best, e.BestEpochS, e.BestAcc = r.Run, r.VariantMedianS, r.TestAcc
		if r.Repeat > 0 {
			e.Best = r.Variant
		}
		e.Speedup, e.SpeedupLo, e.SpeedupHi, e.SpeedupMethod = r.Speedup, r.SpeedupLo, r.SpeedupHi, r.SpeedupMethod
		e.SpeedupRatios, e.SingleRun = r.SpeedupRatios, r.SingleRun
	}
	return e
}

// skips says which runs skipped training batches (on_oom skip), "" when
// none did: "RUN skipped N of M batches (x %)" for one run, "skips in K
// runs" for more (their figures cover the trained batches only).
func (e *Entry) skips() string {
	var which []string
	for i := range e.Runs {
		if t := sessions.SkipText(e.Runs[i].SkippedBatches, e.Runs[i].TotalBatches); t != "" {
			which = append(which, e.Runs[i].Run+" "+t)
		}
	}
	switch len(which) {
	case 0:
		return ""
	case 1:
		return which[0]
	}
	return fmt.Sprintf("skips in %d runs", len(which))
}

// speedupCell formats the best run's speedup over the baseline with its
// interval and the best's name ("-" without one).
func (e *Entry) speedupCell() string {
	if e.Speedup <= 0 {
		return "-"
	}
	r := sessions.RunFigures{Speedup: e.Speedup, SpeedupLo: e.SpeedupLo, SpeedupHi: e.SpeedupHi, SpeedupMethod: e.SpeedupMethod, SingleRun: e.SingleRun}
	return sessions.FormatSpeedup(&r, 2) + " " + e.Best
}

func listRun(opts *ListOptions) error {
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	entries, err := listEntries(store, opts.JSON)
	if err != nil {
		return err
	}
	if opts.Reverse {
		slices.Reverse(entries)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(entries)
	}
	out := opts.IO.Out
	if len(entries) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no sessions in %s yet (gnnscope run makes one)\n", store.Root())
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tVARIANTS\tDATA\tMODEL\tBASE s\tBEST s\tSPEEDUP\tTEST ACC")
	for _, e := range entries {
		status := string(e.Status)
		if e.Imported {
			status += " (imported)"
		}
		if skips := e.skips(); skips != "" {
			status += ", " + skips
		}
		cells := []string{e.ID, localTime(e.Created, "2006-01-02 15:04"), status, cmdutil.Dash(strings.Join(e.Variants, ",")), cmdutil.Dash(e.Data), cmdutil.Dash(e.Model)}
		cells = append(cells, secOrDash(e.BaselineEpochS), secOrDash(e.BestEpochS))
		cells = append(cells, e.speedupCell())
		acc := accOrDash(e.BaselineAcc)
		if e.Best != "" {
			acc += "/" + accOrDash(e.BestAcc)
		}
		cells = append(cells, acc)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Error != "" {
			fmt.Fprintf(opts.IO.ErrOut, "session %s: %s\n", e.ID, e.Error)
		}
	}
	return nil
}

// listEntries describes every session of the store, oldest first: from
// the cache for the table, every run's figures for --json (all).
func listEntries(store *sessions.Store, all bool) ([]Entry, error) {
	list, describe := store.Folders, describeCached
	if all {
		list, describe = store.List, describeSession
	}
	infos, err := list()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(infos))
	for _, info := range infos {
		entries = append(entries, describe(store, info))
	}
	return entries, nil
}

func localTime(t time.Time, layout string) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(layout)
}

func secOrDash(v float64) string {
	if v <= 0 {
		return "-"
	}
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func accOrDash(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *p)
}
