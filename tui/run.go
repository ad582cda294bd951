package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// Options configure the workbench.
type Options struct {
	// Home is the store root (default: $GNNSCOPE_HOME, else the XDG data
	// folder; see sessions.DefaultRoot).
	Home string
	// NoColor draws without colors (also when NO_COLOR is set).
	NoColor bool
	// ASCII draws with 7-bit characters only (no braille, no box
	// drawing).
	ASCII bool
	// Session, if set, is the id of a session whose dashboard opens at
	// once (live while it runs, a replay otherwise; Replay forces a
	// replay); the sessions list is one step back.
	Session string
	Replay  bool
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
}

// Run opens the workbench and returns when the user quits (or ctx ends).
// Runs launched from it go on in the background.
func Run(ctx context.Context, opts Options) error {
	store, err := sessions.Open(opts.Home)
	if err != nil {
		return fmt.Errorf("workbench: %w", err)
	}
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	c := common.New(store, common.Options{NoColor: opts.NoColor, ASCII: opts.ASCII})
	var pending launch.Pending
	m := New(c, pending.Wrap(launch.Runner(store)))
	m.WatchSessions()
	if opts.Session != "" {
		m.OpenFirst(common.OpenDashboardMsg{Session: opts.Session, Replay: opts.Replay})
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(c.Opts.MaxFPS)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	_, err = tea.NewProgram(m, popts...).Run()
	m.Close()
	out := opts.Output
	if out == nil {
		out = os.Stdout
	}
	finishLaunches(out, &pending)
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return fmt.Errorf("workbench: %w", err)
	}
	n := 0
	for _, e := range m.List().Entries() {
		if e.Running() {
			n++
		}
	}
	if n > 0 {
		what, it := "session is", "it"
		if n > 1 {
			what, it = "sessions are", "them"
		}
		fmt.Fprintf(out, "%d %s still running in the background; run gnnscope again to follow %s.\n", n, what, it)
	}
	return nil
}

// launchWait bounds the wait on quit for launches under way.
const launchWait = 30 * time.Second

// finishLaunches lets the launches under way when the workbench quit
// complete (at most launchWait) and says how each ended: a launch is not
// cut off in its middle by the program's exit.
func finishLaunches(out io.Writer, pending *launch.Pending) {
	_, still := pending.Wait(0) // what ended before the quit was shown
	if len(still) == 0 {
		return
	}
	fmt.Fprintf(out, "waiting for %d launch(es) to complete: %s\n", len(still), strings.Join(still, ", "))
	outcomes, still := pending.Wait(launchWait)
	for _, o := range outcomes {
		fmt.Fprintln(out, o)
	}
	for _, what := range still {
		fmt.Fprintf(out, "the launch of %s did not complete within %s; it was cut off (gnnscope sessions lists what it left as broken)\n", what, launchWait)
	}
}
