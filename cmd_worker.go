package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// newWorkerCmd is the hidden command that `gnnscope run` starts in the
// background: one run of a session, or the sequencer that starts a
// session's runs one after the other.
func newWorkerCmd() *cobra.Command {
	var id, run, root string
	var all bool
	cmd := &cobra.Command{
		Use:    "worker --session ID (--run NAME | --all)",
		Short:  "Run one run of a session, or all of them in order (started by 'gnnscope run')",
		Hidden: true,
		Long: `Run one run of a launched session in this process, writing its journal
(--run), or act as the session's sequencer, starting each run as its own
worker process one after the other (--all). 'gnnscope run' starts these
detached from the terminal; SIGTERM or SIGINT cancels them. The exit status
is non-zero when the run did not end ok.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" {
				return errors.New("--session is required")
			}
			if (run == "") == !all {
				return errors.New("give exactly one of --run NAME and --all")
			}
			store, err := sessions.Open(root)
			if err != nil {
				return err
			}
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := runner.StopContext(parent)
			defer stop()
			log := cmd.ErrOrStderr()
			if all {
				err := runner.RunSequence(ctx, store, id, "", log)
				if errors.Is(err, context.Canceled) {
					fmt.Fprintln(log, "sequencer: canceled")
					return nil
				}
				return err
			}
			_, err = runner.RunWorker(ctx, store, id, run, log)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&id, "session", "", "session id")
	fl.StringVar(&run, "run", "", "run to execute (a variant of the session)")
	fl.BoolVar(&all, "all", false, "start the session's runs one after the other (sequencer)")
	fl.StringVar(&root, "store", "", "store root (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}
