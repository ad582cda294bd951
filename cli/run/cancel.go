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
	states := waitStopped(opts, s)
	if opts.JSON {
		if werr := opts.IO.WriteJSON(struct {
			*runner.CancelReport
			Runs []sessions.RunState `json:"runs"`
		}{rep, states}); werr != nil {
			return werr
		}
	} else {
		out := opts.IO.Out
		if len(rep.Orphans) > 0 {
			fmt.Fprintf(out, "killed what the commands of %s left running after their workers died\n", strings.Join(rep.Orphans, ", "))
		}
		if len(rep.Signaled) == 0 && len(rep.Marked) == 0 && len(rep.Orphans) == 0 && !rep.Sequencer {
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
	if left := stopping(s, states); len(left) > 0 {
		return fmt.Errorf("session %s: %s still stopping after %s (a command that ignores SIGINT gets SIGTERM, then SIGKILL, %s apart); "+
			"'gnnscope sessions show %s' tells when it has stopped", s.ID(), strings.Join(left, ", "), cancelWait, runner.CancelGrace, s.ID())
	}
	return nil
}

// cancelWait bounds how long `run --cancel` waits for the runs to stop.
const cancelWait = 15 * time.Second

// waitStopped waits, at most cancelWait (Ctrl-C ends it sooner), until no
// run of s is running or pending, its sequencer is gone and no process of
// a command is left (stopping), and returns the runs' states. Every
// 2 s it says on stderr what it still waits for.
func waitStopped(opts *RunOptions, s *sessions.Session) []sessions.RunState {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	next := start.Add(2 * time.Second)
	for {
		states, serr := runner.RunStates(s)
		busy, _ := s.InUse() // the sequencer may outlive the runs by a moment
		left := stopping(s, states)
		if serr != nil || (len(left) == 0 && !busy) || time.Since(start) > cancelWait || ctx.Err() != nil {
			return states
		}
		if now := time.Now(); now.After(next) && !opts.Quiet && !opts.JSON && len(left) > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "waiting for %s to stop (%.0f s)\n", strings.Join(left, ", "), now.Sub(start).Seconds())
			next = now.Add(2 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopping lists the runs of s that have not really stopped: running or
// pending, or with a process of their command still alive.
func stopping(s *sessions.Session, states []sessions.RunState) []string {
	var left []string
	for _, r := range states {
		if runner.Active([]sessions.RunState{r}) || len(runner.TrainerProcs(s, r.Run)) > 0 {
			left = append(left, r.Run)
		}
	}
	return left
}
