package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/clients/python"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// Launch modes (launch.json's "mode").
const (
	ModeSequential = "sequential" // one run after the other, through a sequencer process
	ModeParallel   = "parallel"   // every run at once
)

// Files this package adds to a session folder.
const (
	launchFile    = "launch.json"
	sequencerPid  = "sequencer.pid"
	sequencerLog  = "sequencer.log"
	canceledFile  = "canceled"
	workerCommand = "worker"
)

// LaunchOptions tune Launch.
type LaunchOptions struct {
	// Parallel starts every run at once; by default runs go one after
	// the other so they do not distort each other's timings.
	Parallel bool
	// Executable is the gnnscope binary that runs `worker` (default: this
	// process's executable).
	Executable string
	// Repeats runs every variant this many times (0 and 1: once); see
	// Launch for the run names.
	Repeats int
	// Dir is the folder an external variant's relative working folder
	// starts from (default: this process's working folder).
	Dir string
	// Warn receives warnings, one a line, about what did not stop the
	// launch (a worker's pid file that could not be written: the worker
	// writes it as well); nil drops them.
	Warn io.Writer
}

// launchState is launch.json: how the runs were launched. It is written
// once, before any run starts.
type launchState struct {
	Mode string   `json:"mode"`
	Runs []string `json:"runs"` // in launch order
	// Variants maps the runs not named after their variant (repeats)
	// to it.
	Variants map[string]string `json:"variants,omitempty"`
	Launcher procRecord        `json:"launcher"`
	Started  time.Time         `json:"started"`
}

// variantSpec is a session.json variant's "spec".
type variantSpec struct {
	Overrides map[string]any `json:"overrides,omitempty"`
	// Config is the resolved train.Config, or for an external variant
	// {"cmd": [...], "external": true}.
	Config   json.RawMessage `json:"config"`
	External *External       `json:"external,omitempty"`
	Adjusted []string        `json:"adjusted,omitempty"` // Resolved.Adjusted
}

// Launch checks the experiment and its variants (nothing starts if any is
// invalid, the dataset reference of an engine variant does not resolve, or
// an external variant's folder or program is missing), creates a session
// in store, and starts one run per variant (opts.Repeats runs with
// Repeats > 1, named NAME.r1, NAME.r2, ... and interleaved ABBA-style:
// every variant's odd repeat in the given order, its even repeat in the
// reverse order, so that drift hits every variant alike) as a detached worker
// process (`gnnscope worker --session ID --run NAME`, in a new process
// session, stdin /dev/null, output appended to runs/<run>.log). The worker
// of an external variant supervises its command (see RunWorker); for
// those, Launch first extracts the embedded Python client into the
// session's pyclient folder.
//
// By default a detached sequencer (`gnnscope worker --session ID --all`)
// starts the runs one after the other, each as its own worker process, so
// the caller need not stay alive; with Parallel they all start at once.
// session.json holds the experiment and the resolved config of every
// variant (an external one's command, environment and absolute working
// folder); launch.json the launch mode and order, from which RunStates
// reports runs that have not started as pending.
//
// If a process cannot be started, the session is returned with the error
// and the runs that did not start are marked failed.
func Launch(store *sessions.Store, exp Experiment, variants []Variant, opts LaunchOptions) (*sessions.Session, error) {
	resolved, err := Resolve(exp, variants)
	if err != nil {
		return nil, err
	}
	if err := checkLaunch(exp, resolved, opts.Dir); err != nil {
		return nil, err
	}
	repeats := opts.Repeats
	if repeats == 0 {
		repeats = exp.Repeats
	}
	runs, runVariants, err := repeatRuns(resolved, repeats)
	if err != nil {
		return nil, err
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("launch: find the gnnscope executable: %w", err)
		}
	}
	st := launchState{Mode: ModeSequential, Runs: runs, Variants: runVariants, Launcher: thisProc(os.Getpid()), Started: time.Now()}
	if opts.Parallel {
		st.Mode = ModeParallel
	}
	// The session appears in the store with its session.json, its
	// launch.json and the Python client, or not at all.
	s, err := createSession(store, exp, resolved, func(s *sessions.Session) error {
		if slices.ContainsFunc(resolved, func(r Resolved) bool { return r.External != nil }) {
			if err := python.Extract(filepath.Join(s.Dir(), pyclientDir)); err != nil {
				return fmt.Errorf("launch: %w", err)
			}
		}
		return writeLaunch(s, st)
	})
	if err != nil {
		return nil, err
	}
	// Workers are found by their command line when their pid files are
	// missing (Cancel): give them the store's absolute path.
	root, err := filepath.Abs(store.Root())
	if err != nil {
		return s, fmt.Errorf("launch: %w", err)
	}
	if !opts.Parallel {
		cmd, err := startDetached(exe, filepath.Join(s.Dir(), sequencerLog), workerCommand, "--store", root, "--session", s.ID(), "--all")
		if err != nil {
			failNotStarted(s, st.Runs, fmt.Errorf("the sequencer did not start: %w", err))
			return s, fmt.Errorf("launch: start sequencer: %w", err)
		}
		perr := writeProc(filepath.Join(s.Dir(), sequencerPid), cmd.Process.Pid)
		go cmd.Wait() // reap it if this process lives on
		if perr != nil {
			return s, fmt.Errorf("launch: %w", perr)
		}
		return s, nil
	}
	// launch.json's lock tells that this launcher may start runs yet.
	release, err := lockLaunch(s)
	defer release()
	if err != nil && opts.Warn != nil {
		fmt.Fprintf(opts.Warn, "gnnscope: %v\n", err)
	}
	for i, run := range st.Runs {
		if canceled(s) {
			markNotStarted(s, run, profile.StatusCanceled, errCanceledBeforeStart)
			continue
		}
		cmd, warn, err := startWorker(s, root, exe, run)
		if err != nil {
			failNotStarted(s, st.Runs[i:], fmt.Errorf("the worker did not start: %w", err))
			return s, fmt.Errorf("launch: start run %s: %w", run, err)
		}
		if warn != nil && opts.Warn != nil {
			fmt.Fprintf(opts.Warn, "gnnscope: run %s: %v\n", run, warn)
		}
		go cmd.Wait()
	}
	return s, nil
}

// checkLaunch refuses what would fail once started: a GPU this binary
// cannot drive or a dataset that does not resolve (engine variants), a
// missing folder or program (external variants, whose External it
// replaces with a prepared copy: absolute folder). dir is the folder
// relative working folders start from ("" = this process's).
func checkLaunch(exp Experiment, resolved []Resolved, dir string) error {
	engine := false
	for i, r := range resolved {
		if r.External != nil {
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("launch: %w", err)
				}
				dir = wd
			}
			ext, err := r.External.prepare(dir)
			if err != nil {
				return fmt.Errorf("variant %q: %w", r.Name, err)
			}
			resolved[i].External = ext
			continue
		}
		engine = true
		// Refuse a GPU this binary cannot drive before anything starts.
		if kind, _, _ := device.ParseName(r.Config.Device); kind == device.KindCUDA && !backend.CUDABuilt {
			return fmt.Errorf("variant %q: %w", r.Name, backend.ErrNoCUDA)
		}
	}
	if engine {
		return CheckDataset(exp.Data)
	}
	return nil
}

// RepeatName is the name of repeat k (from 1) of a variant's runs when a
// launch repeats them.
func RepeatName(variant string, k int) string { return fmt.Sprintf("%s.r%d", variant, k) }

// repeatRuns returns the run names in launch order (repeats ABBA:
// odd repeats in the variants' order, even ones reversed) and, for the
// runs not named after their variant, their variant.
func repeatRuns(resolved []Resolved, repeats int) ([]string, map[string]string, error) {
	if repeats < 0 {
		return nil, nil, fmt.Errorf("repeats must be at least 1, got %d", repeats)
	}
	if n := int64(len(resolved)) * int64(max(repeats, 1)); n > MaxRuns {
		return nil, nil, fmt.Errorf("%d variants repeated %d times make %d runs: at most %d run in one session", len(resolved), repeats, n, MaxRuns)
	}
	var runs []string
	if repeats <= 1 {
		for _, r := range resolved {
			runs = append(runs, r.Name)
		}
		return runs, nil, nil
	}
	of := map[string]string{}
	for k := 1; k <= repeats; k++ {
		order := slices.Clone(resolved)
		if k%2 == 0 {
			slices.Reverse(order) // ABBA: drift hits every variant alike
		}
		for _, r := range order {
			run := RepeatName(r.Name, k)
			if err := checkRunName(run); err != nil {
				return nil, nil, fmt.Errorf("variant %q repeated: %w", r.Name, err)
			}
			if _, dup := of[run]; dup || slices.ContainsFunc(resolved, func(o Resolved) bool { return o.Name == run }) {
				return nil, nil, fmt.Errorf("run %s of a repeated variant %q clashes with another run's name", run, r.Name)
			}
			runs = append(runs, run)
			of[run] = r.Name
		}
	}
	return runs, of, nil
}

// createSession creates the session: session.json with the experiment and
// every resolved variant, and the files prepare writes (see
// sessions.Store.CreateWith).
func createSession(store *sessions.Store, exp Experiment, resolved []Resolved, prepare func(*sessions.Session) error) (*sessions.Session, error) {
	if exp.Name == "" {
		exp.Name = sessionName(exp, resolved)
	}
	meta := sessions.SessionMeta{Name: exp.Name}
	var err error
	if meta.Spec, err = json.Marshal(exp); err != nil {
		return nil, fmt.Errorf("launch: encode experiment: %w", err)
	}
	for _, r := range resolved {
		vs := variantSpec{Overrides: r.Overrides, External: r.External, Adjusted: r.Adjusted}
		if r.External != nil {
			vs.Config = r.External.config()
		} else if vs.Config, err = json.Marshal(r.Config); err != nil {
			return nil, fmt.Errorf("launch: encode variant %s: %w", r.Name, err)
		}
		b, err := json.Marshal(vs)
		if err != nil {
			return nil, fmt.Errorf("launch: encode variant %s: %w", r.Name, err)
		}
		meta.Variants = append(meta.Variants, sessions.Variant{Name: r.Name, Spec: b})
	}
	return store.CreateWith(meta, prepare)
}

// sessionName names a session whose experiment has no name: the model and
// dataset, or the commands of a launch with external runs only.
func sessionName(exp Experiment, resolved []Resolved) string {
	var cmds []string
	for _, r := range resolved {
		if r.External == nil {
			return fmt.Sprintf("%s on %s", exp.Train.Model, exp.Data)
		}
		cmds = append(cmds, r.Name)
	}
	return "external: " + strings.Join(cmds, ", ")
}

// writeLaunch writes launch.json.
func writeLaunch(s *sessions.Session, st launchState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	err = sessions.WriteStoreFile(filepath.Join(s.Dir(), launchFile), 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	return nil
}

// lockLaunch takes the lock of the session's launch.json, which the
// process that starts the session's runs (the sequencer, or a parallel
// launch's launcher) holds while it may start one (see starterAlive).
// release, never nil, drops it.
func lockLaunch(s *sessions.Session) (release func(), err error) {
	f, err := sessions.OpenRegular(filepath.Join(s.Dir(), launchFile))
	if err != nil {
		return func() {}, fmt.Errorf("lock launch file: %w", err)
	}
	release = func() { f.Close() }
	if err := sessions.LockFile(f); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return release, err
	}
	return release, nil
}

// startWorker starts the worker of one run and records its pid. A pid
// file that could not be written is returned as warn: the worker writes
// it itself as well.
func startWorker(s *sessions.Session, root, exe, run string) (cmd *exec.Cmd, warn, err error) {
	logPath := filepath.Join(s.RunsDir(), run+".log")
	cmd, err = startDetached(exe, logPath, workerCommand, "--store", root, "--session", s.ID(), "--run", run)
	if err != nil {
		return nil, nil, err
	}
	return cmd, s.WritePid(run, cmd.Process.Pid), nil
}

// startDetached starts exe with args in a new process session, stdin from
// /dev/null and output appended to logPath.
func startDetached(exe, logPath string, args ...string) (*exec.Cmd, error) {
	log, err := sessions.OpenRegularFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(exe, args...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

var errCanceledBeforeStart = errors.New("canceled before it started")

// failNotStarted marks runs that will never start as failed.
func failNotStarted(s *sessions.Session, runs []string, err error) {
	for _, run := range runs {
		markNotStarted(s, run, profile.StatusFailed, err)
	}
}

// markNotStarted writes the journal of a run that never started: run_start
// and run_end with status and err. It does nothing if the run already has
// a journal (it started, or was marked): journals are claimed by creating
// them exclusively, so a run is either started or marked, never both.
func markNotStarted(s *sessions.Session, run string, status profile.Status, cause error) (bool, error) {
	path := s.JournalPath(run)
	f, err := sessions.OpenRegularFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, err
	}
	f.Close()
	jw, err := sessions.OpenJournal(path)
	if err != nil {
		return true, err
	}
	rec := profile.NewRecorder(jw, profile.RecorderOptions{})
	variant, cfg := variantOf(s, run), json.RawMessage(nil)
	var adjusted []string
	if _, resolved, err := LoadSession(s); err == nil {
		if i := slices.IndexFunc(resolved, func(r Resolved) bool { return r.Name == variant }); i >= 0 {
			if ext := resolved[i].External; ext != nil {
				cfg = ext.config()
			} else {
				cfg, _ = json.Marshal(resolved[i].Config)
			}
			adjusted = resolved[i].Adjusted
		}
	}
	rec.RunStart(run, s.ID(), variant, cfg, nil, adjusted...)
	err = rec.Close(status, cause, nil)
	if cerr := jw.Close(); err == nil {
		err = cerr
	}
	return true, err
}
