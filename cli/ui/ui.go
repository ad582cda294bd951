package ui

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	clisessions "github.com/gnnscope/gnnscope/cli/sessions"
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

	// Getenv reads the environment (nil: os.Getenv): the locale picks
	// --ascii, and TERM=dumb the headless views.
	Getenv func(string) string
	// Headless prints what the workbench would open, without it: the
	// sessions list, or SESSION's details (`sessions ls`, `sessions
	// show`); for a terminal that cannot draw the workbench.
	Headless func(session string) error
	// Open opens the workbench (nil: tui.Run).
	Open func(context.Context, tui.Options) error
}

// NewCmdUI returns `gnnscope ui`. With runF, the command calls it with the
// parsed options instead of opening the workbench.
func NewCmdUI(f *cmdutil.Factory, runF func(*UIOptions) error) *cobra.Command {
	opts := &UIOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	opts.Headless = headless(f, &opts.Home)
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
terminals and fonts that lack them; a locale that is not UTF-8 (LC_ALL,
LC_CTYPE or LANG: C, POSIX, ISO-8859-1, or none set) implies it. On a
terminal that cannot draw it (TERM=dumb) the workbench says so and
prints the sessions list instead (with SESSION, 'sessions show SESSION').`,
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
	opts := &UIOptions{IO: f.IOStreams}
	opts.Headless = headless(f, &opts.Home)
	return uiRun(opts)
}

// headless returns UIOptions.Headless for the store under *home.
func headless(f *cmdutil.Factory, home *string) func(string) error {
	return func(session string) error {
		args := []string{"ls"}
		if session != "" {
			args = []string{"show", session}
		}
		if *home != "" {
			args = append(args, "--store", *home)
		}
		cmd := clisessions.NewCmdSessions(f)
		cmd.SetArgs(args)
		return cmd.Execute()
	}
}

func uiRun(opts *UIOptions) error {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if dumbTerminal(getenv) && opts.Headless != nil {
		what := "the sessions list"
		if opts.Session != "" {
			what = "session " + opts.Session
		}
		fmt.Fprintf(opts.IO.ErrOut, "TERM=dumb: this terminal cannot draw the workbench (it moves no cursor); showing %s instead.\n"+
			"Set TERM to your terminal's type (e.g. TERM=xterm-256color) to open it.\n\n", what)
		return opts.Headless(opts.Session)
	}
	ascii := opts.ASCII || !utf8Locale(getenv)
	topts := tui.Options{Home: opts.Home, NoColor: opts.NoColor || opts.IO.NoColor(), ASCII: ascii}
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
	run := opts.Open
	if run == nil {
		run = tui.Run
	}
	return run(context.Background(), topts)
}

// Replay opens the workbench on the replay of a session: what 'gnnscope
// replay SESSION' does on a terminal.
func Replay(io *iostreams.IOStreams, home, id string) error {
	return tui.Run(context.Background(), tui.Options{Home: home, NoColor: io.NoColor(), ASCII: !utf8Locale(os.Getenv), Session: id, Replay: true})
}
