package ui

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/tui"
)

// UIOptions are the inputs of `gnnscope ui`.
type UIOptions struct {
	IO *iostreams.IOStreams

	NoColor bool
	ASCII   bool
	Home    string
}

// NewCmdUI returns `gnnscope ui`. With runF, the command calls it with the
// parsed options instead of opening the workbench.
func NewCmdUI(f *cmdutil.Factory, runF func(*UIOptions) error) *cobra.Command {
	opts := &UIOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "ui [--no-color] [--ascii] [--home DIR]",
		Short: "Open the workbench: sessions, live dashboards, comparisons, exports",
		Long: `Open the terminal workbench (also what 'gnnscope' without a command does on
a terminal). It lists the sessions of the store, running ones live; opens a
session's dashboard (live while it runs, a replay afterwards); sets up and
launches experiments in the background (L launches the default one:
sage on synth-tiny, baseline against optimized); compares runs and exports
tables (Markdown, CSV, LaTeX), Chrome traces and session archives.

Press ? for every key. Quitting (q) leaves runs running; the next start
finds them and follows them again.

Colors follow the terminal; NO_COLOR or --no-color turns them off, and
--ascii draws with 7-bit characters only (no braille, no box drawing), for
terminals and fonts that lack them.`,
		Example: `  gnnscope
  gnnscope ui --ascii --no-color
  gnnscope ui --home /data/gnnscope`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return uiRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.NoColor, "no-color", false, "no colors (as NO_COLOR)")
	fl.BoolVar(&opts.ASCII, "ascii", false, "7-bit characters only: no braille, no box drawing")
	fl.StringVar(&opts.Home, "home", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

// Workbench opens the workbench with the default options: what `gnnscope`
// without a command does on a terminal.
func Workbench(f *cmdutil.Factory) error {
	return uiRun(&UIOptions{IO: f.IOStreams})
}

func uiRun(opts *UIOptions) error {
	noColor := opts.NoColor || opts.IO.NoColor()
	return tui.Run(context.Background(), tui.Options{Home: opts.Home, NoColor: noColor, ASCII: opts.ASCII})
}
