package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/tui"
)

func init() { subcommands = append(subcommands, newUICmd) }

// uiFlags are the flags of `gnnscope ui`.
type uiFlags struct {
	noColor bool
	ascii   bool
	home    string
}

func newUICmd() *cobra.Command {
	f := &uiFlags{}
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkbench(cmd, f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.noColor, "no-color", false, "no colors (as NO_COLOR)")
	fl.BoolVar(&f.ascii, "ascii", false, "7-bit characters only: no braille, no box drawing")
	fl.StringVar(&f.home, "home", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func runWorkbench(cmd *cobra.Command, f *uiFlags) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return tui.Run(ctx, tui.Options{Home: f.home, NoColor: f.noColor, ASCII: f.ascii})
}

// runRoot is `gnnscope` without a command: the workbench when stdin and
// stdout are terminals, the help otherwise (in a pipe or a script).
func runRoot(cmd *cobra.Command, _ []string) error {
	if !fileIsTerminal(os.Stdout) || !fileIsTerminal(os.Stdin) {
		return cmd.Help()
	}
	return runWorkbench(cmd, &uiFlags{})
}
