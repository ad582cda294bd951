package ui

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui"
)

// UIOptions are the inputs of `gnnscope ui`.
type UIOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	// Session is the session whose dashboard opens at once ("": the
	// sessions list).
	Session string
	NoColor bool
	ASCII   bool
	Home    string
}

// NewCmdUI returns `gnnscope ui`. With runF, the command calls it with the
// parsed options instead of opening the workbench.
func NewCmdUI(f *cmdutil.Factory, runF func(*UIOptions) error) *cobra.Command {
	opts := &UIOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "ui [SESSION] [--no-color] [--ascii] [--home DIR]",
		Short: "Open the workbench: sessions, live dashboards, comparisons, exports",
		Long: `Open the terminal workbench (also what 'gnnscope' without a command does on
a terminal). It lists the sessions of the store, running ones live; opens a
session's dashboard (live while it runs, a replay afterwards); sets up and
launches experiments in the background (L launches the default one:
sage on synth-tiny, baseline against optimized); compares runs and exports
tables (Markdown, CSV, LaTeX), Chrome traces and session archives.

With SESSION (an id, a unique prefix of one, or "last") the workbench opens
on that session's dashboard, live while it runs and a replay afterwards;
esc goes back to the sessions list.

Press ? for every key. Quitting (q) leaves runs running; the next start
finds them and follows them again.

Colors follow the terminal; NO_COLOR or --no-color turns them off, and
--ascii draws with 7-bit characters only (no braille, no box drawing), for
terminals and fonts that lack them.`,
		Example: `  gnnscope
  gnnscope ui last
  gnnscope ui --ascii --no-color
  gnnscope ui --home /data/gnnscope`,
		Args: cmdutil.MaximumArgs(1, "one SESSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
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
	topts := tui.Options{Home: opts.Home, NoColor: opts.NoColor || opts.IO.NoColor(), ASCII: opts.ASCII}
	if opts.Session != "" {
		open := opts.OpenStore
		if open == nil {
			open = sessions.Open
		}
		store, err := open(opts.Home)
		if err != nil {
			return err
		}
		if topts.Session, err = cmdutil.ResolveSession(store, opts.Session); err != nil {
			return err
		}
	}
	return tui.Run(context.Background(), topts)
}

// Replay opens the workbench on the replay of a session: what 'gnnscope
// replay SESSION' does on a terminal.
func Replay(io *iostreams.IOStreams, home, id string) error {
	return tui.Run(context.Background(), tui.Options{Home: home, NoColor: io.NoColor(), Session: id, Replay: true})
}
