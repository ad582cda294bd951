package importcmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

// NewCmdImport returns `gnnscope import`; each kind is a subcommand.
func NewCmdImport(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import KIND ...",
		Short: "Import other profilers' traces as sessions (trace: torch.profiler)",
		Long: `Import what other profilers recorded. Kinds:
  trace   torch.profiler traces (Chrome JSON from export_chrome_trace or
          tensorboard_trace_handler, plain or gzip-compressed)

Archives of gnnscope sessions are imported with 'gnnscope sessions import'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdTrace(f, nil))
	return cmd
}

// TraceOptions are the inputs of `gnnscope import trace`.
type TraceOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Files   []string
	Session string // attach to a run of this session
	Run     string
	Name    string
	Zero    string // RFC 3339: the wall-clock time of time 0 of a trace without wall-clock times
	JSON    bool
	Store   string
}

// NewCmdTrace returns `gnnscope import trace`. With runF, the command
// calls it with the parsed options instead of importing.
func NewCmdTrace(f *cmdutil.Factory, runF func(*TraceOptions) error) *cobra.Command {
	opts := &TraceOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "trace FILE.json[.gz] ... [--session S --run NAME]",
		Short: "Turn torch.profiler traces into a session, or add them to a run",
		Long: `Read torch.profiler traces (Kineto's Chrome JSON, one file per rank) and
make a new session of one run, "trace", with a lane per thread (cpu/TID:
operators, nested; annot/TID: user annotations; runtime/TID: CUDA
runtime calls) and per device stream (gpuD/sS: kernels, memcpy,
memset). A kernel and the call that launched it share the attribute
"link"; the timeline lists a selected span's links. ProfilerStep#N
ranges become batch N (a train span on lane compute), DataLoader waits
wait, Optimizer.step step, autograd functions backward and host-to-device
copies transfer, so compare, export and the dashboard work on the trace;
[memory] events become the memory series.

With --session and --run the traces join an existing run instead (an
external run whose trainer wrote them), on the run's clock: the trace's
wall-clock times against the run's start. Traces whose times start at 0
(the legacy profiler's) need --zero, the wall-clock time of their start.

Traces are read as streams, twice (a first pass indexes the steps and
the launches): memory stays bounded on traces of hundreds of MB. A
damaged trace is refused with the file, byte and event that broke it.`,
		Example: `  gnnscope import trace trace.json.gz
  gnnscope import trace rank0.pt.trace.json rank1.pt.trace.json --name ddp
  gnnscope import trace trace.json --session last --run external`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if (opts.Session == "") != (opts.Run == "") {
				return errors.New("--session and --run go together")
			}
			if runF != nil {
				return runF(opts)
			}
			return traceRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Session, "session", "", "add the traces to a run of session `S` (with --run)")
	fl.StringVar(&opts.Run, "run", "", "the run `NAME` the traces join (with --session)")
	fl.StringVar(&opts.Name, "name", "", "a new session's `NAME`")
	fl.StringVar(&opts.Zero, "zero", "", "wall-clock `TIME` (RFC 3339) of time 0 of traces without wall-clock times")
	fl.BoolVar(&opts.JSON, "json", false, "print what was imported as JSON")
	fl.StringVar(&opts.Store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	return cmd
}

// traceResult is what `import trace --json` prints.
type traceResult struct {
	Session string               `json:"session"`
	Run     string               `json:"run"`
	Files   []sessions.TraceFile `json:"files"`
}

func traceRun(opts *TraceOptions) error {
	io := sessions.TraceImportOptions{Name: opts.Name}
	if opts.Zero != "" {
		z, err := time.Parse(time.RFC3339Nano, opts.Zero)
		if err != nil {
			return fmt.Errorf("--zero %q: want an RFC 3339 time (2026-11-28T14:20:00.123Z)", opts.Zero)
		}
		io.Zero = z
	}
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	res := traceResult{Run: opts.Run}
	if opts.Session != "" {
		s, err := store.MatchSession(opts.Session)
		if err != nil {
			return err
		}
		run, err := s.MatchRun(opts.Run)
		if err != nil {
			return err
		}
		res.Session, res.Run = s.ID(), run
		res.Files, err = s.AttachTraces(run, opts.Files, io)
		if err != nil {
			return err
		}
	} else {
		s, files, err := store.ImportTraces(opts.Files, io)
		if s != nil {
			res.Session, res.Run = s.ID(), sessions.TraceRun
		}
		res.Files = files
		if err != nil {
			if s != nil {
				return fmt.Errorf("%w (session %s keeps what was read)", err, s.ID())
			}
			return err
		}
	}
	if opts.JSON {
		return opts.IO.WriteJSON(res)
	}
	if len(res.Files) == 0 {
		return errors.New("import trace: nothing imported")
	}
	for _, f := range res.Files {
		fmt.Fprintf(opts.IO.Out, "%s: rank %d, %d events: %d spans, %d steps, %d kernels and copies, %d memory points\n",
			f.Path, f.Rank, f.Events, f.Spans, f.Steps, f.Kernels, f.Mem+f.Samples)
		if f.Dropped > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "%s: %d events beyond the index's limits: some links and batches are missing\n", f.Path, f.Dropped)
		}
	}
	fmt.Fprintf(opts.IO.Out, "session %s, run %s\n", res.Session, res.Run)
	return nil
}
