package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// TableWidth is the width the run --wait table fits by default (--wide:
// no limit).
const TableWidth = 80

// waitAndCompare follows a session's runs until none is running or
// pending, then prints the comparison. Ctrl-C stops waiting only.
func waitAndCompare(opts *RunOptions, s *sessions.Session) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := followRuns(ctx, s, opts.IO.NewProgress(opts.Quiet)); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stopped waiting; the runs go on in the background.\n  follow again: gnnscope run --attach %s\n  cancel them:  gnnscope run --cancel %s", s.ID(), s.ID())
		}
		return err
	}
	t, err := runner.Compare(s)
	if err != nil {
		return err
	}
	if opts.JSON {
		err = opts.IO.WriteJSON(t)
	} else {
		if !opts.Wide {
			t.Width = TableWidth
		}
		err = t.Render(opts.IO.Out)
	}
	if err != nil {
		return err
	}
	bad := 0
	for _, r := range t.Runs {
		if r.Status != profile.StatusOK {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d runs did not end ok (see the run logs in %s)", bad, len(t.Runs), s.RunsDir())
	}
	return nil
}

// runProgress is what the journal tells about a run while it goes.
type runProgress struct {
	status profile.Status
	tail   *sessions.RunTailer // the run's journals, its ranks merged
	epochs int                 // total, from run_start's config
	start  time.Time           // run_start's wall clock
	epoch  int                 // last epoch with a loss
	loss   float64
	val    float64
	hasVal bool
	done   time.Time // when the last epoch ended (by this clock)
}

func (p *runProgress) add(evs []profile.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.T {
		case profile.TypeRunStart:
			var cfg struct {
				Epochs int `json:"epochs"`
			}
			if json.Unmarshal(e.Config, &cfg) == nil {
				p.epochs = cfg.Epochs
			}
			if t, err := e.WallTime(); err == nil {
				p.start = t
			}
		case profile.TypeMetric:
			switch e.Name {
			case "loss":
				if e.Epoch >= p.epoch {
					p.epoch, p.loss, p.done = e.Epoch, e.Value, time.Now()
				}
			case "val_acc":
				p.val, p.hasVal = e.Value, true
			}
		case profile.TypeRunEnd:
			p.status = e.Status
		}
	}
}

// line is the run's part of the progress line.
func (p *runProgress) line(run string) string {
	switch p.status {
	case profile.StatusRunning:
	default:
		return run + " " + string(p.status)
	}
	if p.epoch == 0 {
		return run + " starting"
	}
	s := fmt.Sprintf("%s epoch %d", run, p.epoch)
	if p.epochs > 0 {
		s += fmt.Sprintf("/%d", p.epochs)
	}
	s += fmt.Sprintf(" loss %.4f", p.loss)
	if p.hasVal {
		s += fmt.Sprintf(" val %.3f", p.val)
	}
	if p.epochs > p.epoch && !p.start.IsZero() {
		per := p.done.Sub(p.start) / time.Duration(p.epoch)
		eta := per * time.Duration(p.epochs-p.epoch)
		s += " ETA " + eta.Round(time.Second).String()
	}
	return s
}

// followRuns polls the session's run states and tails their journals,
// showing progress on prog, until no run is running or pending, or ctx is
// done.
func followRuns(ctx context.Context, s *sessions.Session, prog *iostreams.Progress) error {
	runs := map[string]*runProgress{}
	defer func() {
		for _, p := range runs {
			if p.tail != nil {
				p.tail.Close()
			}
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		states, err := runner.RunStates(s)
		if err != nil {
			return err
		}
		parts := make([]string, 0, len(states))
		for _, st := range states {
			p := runs[st.Run]
			if p == nil {
				p = &runProgress{}
				runs[st.Run] = p
			}
			if p.tail == nil && st.Size > 0 {
				if p.tail, err = s.TailRunRanks(st.Run, sessions.TailOptions{}); err != nil {
					return err
				}
			}
			if p.tail != nil {
				evs, err := p.tail.Poll()
				if err != nil {
					return err
				}
				p.add(evs)
			}
			was := p.status
			p.status = st.Status // the journal's run_end, or the process's state
			if p.status != was && was != "" && p.status != profile.StatusRunning && p.status != profile.StatusPending {
				prog.Printf("%s: %s\n", st.Run, p.status)
			}
			parts = append(parts, p.line(st.Run))
		}
		active := runner.Active(states)
		prog.Line(!active, "%s", strings.Join(parts, " | "))
		if !active {
			prog.Done()
			return nil
		}
		select {
		case <-ctx.Done():
			prog.Done()
			return ctx.Err()
		case <-tick.C:
		}
	}
}
