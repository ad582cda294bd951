package run

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// cancelRun cancels a session and waits (a while) for its runs to end.
func cancelRun(opts *RunOptions, store *sessions.Store) error {
	s, err := store.MatchSession(opts.Cancel)
	if err != nil {
		return err
	}
	rep, err := runner.Cancel(store, s.ID())
	if rep == nil {
		return err
	}
	errw := opts.IO.ErrOut
	if !opts.Quiet && !opts.JSON {
		if len(rep.Signaled) > 0 {
			fmt.Fprintf(errw, "sent SIGTERM to %s\n", strings.Join(rep.Signaled, ", "))
		}
		if len(rep.Marked) > 0 {
			fmt.Fprintf(errw, "will not start: %s\n", strings.Join(rep.Marked, ", "))
		}
	}
	// Give the workers time to close their journals.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	var states []sessions.RunState
	for {
		var serr error
		states, serr = runner.RunStates(s)
		busy, _ := s.InUse() // the sequencer may outlive the runs by a moment
		if serr != nil || (!runner.Active(states) && !busy) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if opts.JSON {
		if werr := opts.IO.WriteJSON(struct {
			*runner.CancelReport
			Runs []sessions.RunState `json:"runs"`
		}{rep, states}); werr != nil {
			return werr
		}
	} else {
		out := opts.IO.Out
		if len(rep.Signaled) == 0 && len(rep.Marked) == 0 && !rep.Sequencer {
			fmt.Fprintf(out, "session %s: nothing to cancel\n", s.ID())
		} else {
			fmt.Fprintf(out, "session %s canceled\n", s.ID())
		}
		for _, r := range states {
			fmt.Fprintf(out, "  %-16s %s\n", r.Run, r.Status)
		}
	}
	if err != nil {
		return err
	}
	if runner.Active(states) {
		return fmt.Errorf("some runs of session %s have not stopped yet", s.ID())
	}
	return nil
}
