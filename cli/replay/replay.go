package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/cli/ui"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
)

// ReplayOptions are the inputs of `gnnscope replay`.
type ReplayOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)
	// OpenView opens the interactive replay view of a session (store
	// root, session id) on a terminal; nil: events are printed.
	OpenView func(root, id string) error

	// Session is SESSION or SESSION/RUN.
	Session  string
	Store    string
	Speed    string
	From     time.Duration
	Headless bool
	JSON     bool
	Quiet    bool
}

// NewCmdReplay returns `gnnscope replay`. With runF, the command calls it
// with the parsed options instead of replaying.
func NewCmdReplay(f *cmdutil.Factory, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{IO: f.IOStreams, OpenStore: f.OpenStore, OpenView: func(root, id string) error {
		return ui.Replay(f.IOStreams, root, id)
	}}
	cmd := &cobra.Command{
		Use:   "replay SESSION[/RUN] [--speed N|max] [--from DURATION] --headless [--json]",
		Short: "Replay a recorded session's events with their original timing",
		Long: `Replay the journals of a session (or of one run, SESSION/RUN) with their
original timing, at a chosen speed, printing each event as it comes: one
line with its time, run, type and key values. This is the same stream the
live view reads while a run is going, read through a clock instead.

Timing: each run's clock starts at its run_start; a span is due at its end
(start+dur, when it was written), a gpu sample at its ts, and any other
event (mem, metric, oom, stale, ...) right after the event before it in the
journal. Without RUN every run of the session is replayed, merged on one
timeline where each run starts at its run_start's wall-clock time relative
to the first run's (runs that went one after the other replay one after the
other). The time column is the position on that timeline.

--speed: 1 is as recorded, 10 ten times faster, 0.5 half as fast; "max"
prints everything at once. No wait lasts more than 2 s: a longer gap between
events (a run started hours after another, a span dated a year late) is
skipped after 2 s, and a line says how much was skipped. --from skips to a position: the events before it
are not printed (except each run's run_start line). Ctrl-C stops.

On a terminal, without --headless or --json, replay opens the workbench's
replay view of the session instead (every run of it, whatever RUN says;
its keys pause, seek and set the speed; esc goes to the sessions list).
Elsewhere (a pipe, a file) it prints events, as with --headless. A session
that is still running replays as far as its journals go now ('gnnscope run
--attach ID' follows it live).

--json prints one object per line: {"at_ns", "run", "event"}, event being
the journal's event as written, with "skipped_ns" after a skipped gap.`,
		Example: `  gnnscope replay last --headless
  gnnscope replay 20261122-153045-ab12/optimized --speed 10 --headless
  gnnscope replay last --speed max --headless --json | jq -c 'select(.event.t == "metric")'
  gnnscope replay last --from 30s --speed 2 --headless`,
		Args: cmdutil.ExactArgs(1, "one SESSION[/RUN] (gnnscope sessions lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if runF != nil {
				return runF(opts)
			}
			return replayRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	fl.StringVar(&opts.Speed, "speed", "1", "replay speed: a factor (1, 10, x10, 0.5) or max")
	fl.DurationVar(&opts.From, "from", 0, "start at this position (e.g. 30s); earlier events are not printed")
	fl.BoolVar(&opts.Headless, "headless", false, "print the events as they come (the only mode until the workbench)")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object per event")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no notes on stderr")
	return cmd
}

// selectRun returns the runs to replay: run alone ("": every run, nil),
// which must have a journal in s.
func selectRun(s *sessions.Session, run string) ([]string, error) {
	if run == "" {
		return nil, nil
	}
	if err := sessions.ValidName(run); err != nil {
		return nil, fmt.Errorf("run %q: %w", run, err)
	}
	if _, err := os.Stat(s.JournalPath(run)); err != nil {
		names, _ := s.Runs()
		return nil, fmt.Errorf("session %s has no journal for run %q (runs: %s)", s.ID(), run, cmdutil.Dash(strings.Join(names, ", ")))
	}
	return []string{run}, nil
}

// parseSpeed reads a replay speed: a positive factor, optionally with an x
// before or after it (x10, 10x), or "max" (returned as +Inf).
func parseSpeed(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "max" {
		return math.Inf(1), nil
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "x"), "x")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("--speed %q: want a positive factor (1, 10, x10, 0.5) or max", s)
	}
	return v, nil
}

func replayRun(opts *ReplayOptions) error {
	speed, err := parseSpeed(opts.Speed)
	if err != nil {
		return err
	}
	if opts.From < 0 {
		return fmt.Errorf("--from %v: want a position >= 0", opts.From)
	}
	sref, run, _ := strings.Cut(opts.Session, "/")
	if sref == "" {
		return fmt.Errorf("%q: not a session reference (SESSION or SESSION/RUN)", opts.Session)
	}
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	s, err := cmdutil.GetSession(store, sref)
	if err != nil {
		return err
	}
	runs, err := selectRun(s, run)
	if err != nil {
		return err
	}
	errw := opts.IO.ErrOut
	if !opts.Headless && !opts.JSON {
		if opts.IO.IsStdoutTTY() && opts.IO.IsStdinTTY() && opts.OpenView != nil {
			return opts.OpenView(opts.Store, s.ID())
		}
		if !opts.Quiet {
			fmt.Fprintln(errw, "gnnscope replay: not a terminal: printing events (as --headless)")
		}
	}
	ropts := sessions.ReplayOptions{}
	if !math.IsInf(speed, 1) {
		ropts.Speed = speed
	}
	r, err := s.Replay(runs, ropts)
	if err != nil {
		return err
	}
	defer r.Close()
	if math.IsInf(speed, 1) {
		r.Seek(r.Duration()) // everything is due at once
	} else if opts.From > 0 {
		r.Seek(opts.From)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if runs == nil {
		runs, _ = s.Runs()
	}
	return printReplay(ctx, opts, s.ID(), r, runs)
}

// printReplay prints the replay's events as they come due, from
// --from on, as lines or JSON, and a closing note on stderr; an interrupt
// ends it early with a note of where it stopped.
func printReplay(ctx context.Context, opts *ReplayOptions, id string, r *sessions.Replay, runs []string) error {
	width := 0
	for _, n := range runs {
		width = max(width, len(n))
	}
	names := map[string]bool{}
	out, errw := opts.IO.Out, opts.IO.ErrOut
	n := 0
	for {
		ev, err := r.NextEvent(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				if !opts.Quiet {
					fmt.Fprintf(errw, "stopped at %s of %s\n", units.Seconds(r.Position()), units.Seconds(r.Duration()))
				}
				return nil
			}
			return err
		}
		names[ev.Run] = true
		if ev.At < opts.From && ev.Event.T != profile.TypeRunStart {
			continue
		}
		if opts.JSON {
			err = writeReplayJSON(out, ev)
		} else {
			if ev.Skipped > 0 {
				fmt.Fprintf(out, "%12s  skipped a gap of %s without events\n", "", ev.Skipped.Round(time.Millisecond))
			}
			_, err = fmt.Fprintln(out, formatReplayLine(ev, width))
		}
		if err != nil {
			return err
		}
		n++
	}
	if !opts.Quiet {
		fmt.Fprintf(errw, "replayed %d events of %d runs of session %s (%s)\n", n, len(names), id, units.Seconds(r.Duration()))
	}
	return nil
}

func writeReplayJSON(w io.Writer, ev sessions.ReplayEvent) error {
	b, err := json.Marshal(struct {
		At      int64         `json:"at_ns"`
		Run     string        `json:"run"`
		Skipped int64         `json:"skipped_ns,omitempty"` // gap skipped before the event
		Event   profile.Event `json:"event"`
	}{int64(ev.At), ev.Run, int64(ev.Skipped), ev.Event})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// fmtNs writes nanoseconds as a duration rounded to microseconds.
func fmtNs(ns int64) string {
	return time.Duration(ns).Round(time.Microsecond).String()
}

// formatReplayLine is one event of `replay --headless`: time, run, type,
// then the event's key values.
func formatReplayLine(ev sessions.ReplayEvent, runWidth int) string {
	e := &ev.Event
	b := &replayLine{e: e}
	fmt.Fprintf(b, "%12s  %-*s  %-9s", units.Seconds(ev.At), runWidth, ev.Run, e.T)
	kv, at := b.kv, b.at
	switch e.T {
	case profile.TypeRunStart:
		b.runStart()
	case profile.TypeSpan:
		fmt.Fprintf(b, " %s", e.Name)
		kv("lane", e.Lane)
		at()
		kv("start", fmtNs(e.Start))
		kv("dur", fmtNs(e.Dur))
	case profile.TypeMetric:
		fmt.Fprintf(b, " %s=%.6g", e.Name, e.Value)
		at()
	case profile.TypeMem:
		b.mem()
	case profile.TypeGPU:
		kv("used", units.Bytes(e.Used))
		kv("total", units.Bytes(e.Total))
		if e.Util >= 0 { // -1: not measured
			kv("util", fmt.Sprintf("%.0f%%", e.Util*100))
		}
	case profile.TypeOOM:
		at()
		kv("requested", units.Bytes(e.Requested))
		kv("live", units.Bytes(e.Live))
		kv("budget", units.Bytes(e.Budget))
		kv("action", e.Action)
	case profile.TypeGuard:
		at()
		kv("predicted", units.Bytes(e.Predicted))
		kv("actual", units.Bytes(e.Actual))
		kv("budget", units.Bytes(e.Budget))
		kv("action", e.Action)
	case profile.TypeStale:
		at()
		kv("layer", e.Layer)
		kv("mean", fmt.Sprintf("%.3g", e.Mean))
		kv("max", fmt.Sprintf("%.3g", e.Max))
	case profile.TypeHistErr:
		kv("epoch", e.Epoch)
		kv("layer", e.Layer)
		kv("rel_err", fmt.Sprintf("%.4g", e.RelErr))
	case profile.TypeRunEnd:
		kv("status", cmdutil.Dash(string(e.Status)))
		if e.Error != "" {
			kv("error", strconv.Quote(cmdutil.OneLine(e.Error)))
		}
	default:
		if e.Name != "" {
			fmt.Fprintf(b, " %s", e.Name)
		}
		at()
	}
	return b.String()
}

// replayLine builds one line of `replay --headless` for its event e.
type replayLine struct {
	strings.Builder
	e *profile.Event
}

// kv adds a key=value field.
func (b *replayLine) kv(k string, v any) { fmt.Fprintf(b, " %s=%v", k, v) }

// at adds the event's epoch and batch (batch -1: a per-epoch figure).
func (b *replayLine) at() {
	b.kv("epoch", b.e.Epoch)
	if b.e.Batch >= 0 {
		b.kv("batch", b.e.Batch)
	}
}

// runStart adds a run_start's variant, host and wall-clock start.
func (b *replayLine) runStart() {
	e := b.e
	if e.Variant != "" {
		b.kv("variant", e.Variant)
	}
	if h := e.Host; h != nil {
		if h.Hostname != "" {
			b.kv("host", h.Hostname)
		}
		if h.Cores > 0 {
			b.kv("cores", h.Cores)
		}
		if h.GPU != "" {
			b.kv("gpu", strconv.Quote(h.GPU))
		}
	}
	if e.Wall != "" {
		b.kv("wall", e.Wall)
	}
}

// mem adds a mem event's phase, batch and sizes.
func (b *replayLine) mem() {
	e := b.e
	if e.Phase != "" {
		b.kv("phase", e.Phase)
	}
	b.at()
	b.kv("peak", units.Bytes(e.Peak))
	b.kv("live", units.Bytes(e.Live))
	if e.Budget > 0 {
		b.kv("budget", units.Bytes(e.Budget))
	}
	if e.Predicted > 0 {
		b.kv("predicted", units.Bytes(e.Predicted))
	}
}
