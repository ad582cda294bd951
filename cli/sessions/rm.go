package sessions

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// RmOptions are the inputs of `gnnscope sessions rm`.
type RmOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Store    string
	Sessions []string
	Yes      bool
}

// NewCmdRm returns `gnnscope sessions rm`. With runF, the command calls it
// with the parsed options instead of deleting.
func NewCmdRm(f *cmdutil.Factory, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:     "rm SESSION...",
		Aliases: []string{"delete", "remove"},
		Short:   "Delete sessions (not running ones)",
		Long: `Delete sessions and everything in their folders (journals, logs).

A session with a running run, or runs still waiting to start, is refused:
cancel it first with 'gnnscope run --cancel ID'. On a terminal rm asks for
confirmation unless --yes; without a terminal it refuses unless --yes.
Nothing is deleted if any session given is refused. A session's folder is
renamed out of the store first, then deleted. A broken folder (listed as
broken: a launch or a removal that was interrupted) is deleted by the
name the list shows. "last" is always the newest session.`,
		Example: `  gnnscope sessions rm 20261122-153045-ab12
  gnnscope sessions rm 20261122-153045 20261122-160212 --yes`,
		Args: cmdutil.MinimumArgs(1, "SESSION... (gnnscope sessions lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			opts.Sessions = args
			if runF != nil {
				return runF(opts)
			}
			return rmRun(opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func rmRun(opts *RmOptions) error {
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	var ids []string
	for _, ref := range opts.Sessions {
		if ref != "last" && ref != "latest" && store.Broken(ref) != "" {
			ids = append(ids, ref) // a broken folder, by its name
			continue
		}
		id, err := cmdutil.ResolveSession(store, ref)
		if err != nil {
			return err
		}
		if slices.Contains(ids, id) {
			continue
		}
		if s, err := store.Get(id); err == nil {
			// A launch.json with a bad name, or a FIFO in place of a
			// journal, still leaves the states of the other runs: a
			// session made that way can go.
			states, err := runner.RunStates(s)
			if err != nil && !errors.Is(err, sessions.ErrInvalidName) && !errors.Is(err, sessions.ErrNotRegular) {
				return fmt.Errorf("session %s: %w", id, err)
			}
			if runner.Active(states) {
				var busy []string
				for _, r := range states {
					if r.Status == profile.StatusRunning || r.Status == profile.StatusPending {
						busy = append(busy, r.Run+" "+string(r.Status))
					}
				}
				return fmt.Errorf("session %s is running (%s); cancel it first: gnnscope run --cancel %s", id, strings.Join(busy, ", "), id)
			}
		}
		ids = append(ids, id)
	}
	if !opts.Yes {
		in := opts.IO.In
		if !opts.IO.IsStdinTTY() {
			return fmt.Errorf("not deleting %s without confirmation: stdin is not a terminal (pass --yes)", strings.Join(ids, ", "))
		}
		what := "session " + ids[0]
		if len(ids) > 1 {
			what = fmt.Sprintf("%d sessions (%s)", len(ids), strings.Join(ids, ", "))
		}
		fmt.Fprintf(opts.IO.ErrOut, "Delete %s and its journals? [y/N] ", what)
		answer, _ := bufio.NewReader(in).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		default:
			return errors.New("nothing deleted")
		}
	}
	for _, id := range ids {
		if err := store.Delete(id); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "deleted session %s\n", id)
	}
	return nil
}
