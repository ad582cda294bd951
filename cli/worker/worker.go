package worker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// WorkerOptions are the inputs of `gnnscope worker`.
type WorkerOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Session string
	Run     string
	All     bool
	Store   string
}

// NewCmdWorker returns the hidden command that `gnnscope run` starts in
// the background: one run of a session, or the sequencer that starts a
// session's runs one after the other. With runF, the command calls it with
// the parsed options instead of running.
func NewCmdWorker(f *cmdutil.Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:    "worker --session ID (--run NAME | --all)",
		Short:  "Run one run of a session, or all of them in order (started by 'gnnscope run')",
		Hidden: true,
		Long: `Run one run of a launched session in this process, writing its journal
(--run), or act as the session's sequencer, starting each run as its own
worker process one after the other (--all). The run of a variant that runs
a command supervises it: the command runs in a process group of its own,
and when it ends the worker ends the run's journal unless the command did.
'gnnscope run' starts these
detached from the terminal; SIGTERM or SIGINT cancels them. The exit status
is non-zero when the run did not end ok.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Session == "" {
				return errors.New("--session is required")
			}
			if (opts.Run == "") == !opts.All {
				return errors.New("give exactly one of --run NAME and --all")
			}
			if runF != nil {
				return runF(opts)
			}
			return workerRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Session, "session", "", "session id")
	fl.StringVar(&opts.Run, "run", "", "run to execute (a variant of the session)")
	fl.BoolVar(&opts.All, "all", false, "start the session's runs one after the other (sequencer)")
	fl.StringVar(&opts.Store, "store", "", "store root (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

func workerRun(opts *WorkerOptions) error {
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	ctx, stop := runner.StopContext(context.Background())
	defer stop()
	log := opts.IO.ErrOut
	if opts.All {
		err := runner.RunSequence(ctx, store, opts.Session, "", log)
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(log, "sequencer: canceled")
			return nil
		}
		return err
	}
	stopCap := capLog(ctx, store, opts.Session, opts.Run)
	defer stopCap()
	_, err = runner.RunWorker(ctx, store, opts.Session, opts.Run, log)
	return err
}

// logCapInterval is how often a worker caps its run's log.
const logCapInterval = 500 * time.Millisecond

// capLog caps the run's log (runs/<run>.log, where this worker's output
// and an external trainer's go) at the experiment's LogCap while the
// worker runs; stop ends it, with a last cut.
func capLog(ctx context.Context, store *sessions.Store, id, run string) (stop func()) {
	if sessions.ValidName(run) != nil {
		return func() {}
	}
	s, err := store.Get(id)
	if err != nil {
		return func() {}
	}
	exp, _, err := runner.LoadSession(s)
	if err != nil {
		exp = runner.Experiment{}
	}
	return runner.WatchLog(context.WithoutCancel(ctx), filepath.Join(s.RunsDir(), run+".log"), exp.LogCap(), logCapInterval)
}
