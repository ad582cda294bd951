package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// StopContext returns a context canceled by SIGTERM or SIGINT, the
// signals Cancel and a user send to a worker or the sequencer.
func StopContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, stopSignals...)
}

// RunStatus returns the run_end status for the outcome of a run: ok for no
// error, canceled when ctx was canceled, oom for a device out-of-memory
// error, failed otherwise.
func RunStatus(ctx context.Context, err error) profile.Status {
	switch {
	case err == nil:
		return profile.StatusOK
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return profile.StatusCanceled
	case device.IsOOM(err):
		return profile.StatusOOM
	}
	return profile.StatusFailed
}

// RunWorker runs one launched run of a session in this process: it claims
// the run's journal (a run is started once; a journal that exists means it
// started or was canceled before), writes the pid file, records run_start
// (run, session, variant, resolved config, this host), trains with Execute
// and closes the journal with run_end: status ok, failed, oom or canceled
// (ctx canceled, e.g. by SIGTERM; see StopContext), and the train.Result as
// summary. Progress lines go to log. It returns the status, and an error
// for any status but ok.
//
// The run of an external variant is supervised instead (the pid file names
// this process, whose death, on Linux, kills the command): its command
// runs in a process group of its own with GNNSCOPE_JOURNAL, _SESSION,
// _RUN, _VARIANT and _AUTO and the Python client on PYTHONPATH; when it
// ends, run_start (if the command wrote none) and run_end are appended
// unless the command wrote run_end itself: ok for exit 0, failed (the last
// stderr lines as error) for another status, crashed when a signal killed
// it, canceled when ctx was canceled or the session canceled (SIGINT to
// the command's group, then SIGTERM and SIGKILL 5 s apart).
func RunWorker(ctx context.Context, store *sessions.Store, id, run string, log io.Writer) (profile.Status, error) {
	return runWorker(ctx, store, id, run, log, openJournalSink)
}

// journalSink is the journal a worker records its run into.
type journalSink interface {
	profile.Sink
	Close() error
}

// openJournalSink opens a run's journal file (sessions.OpenJournal).
func openJournalSink(path string) (journalSink, error) { return sessions.OpenJournal(path) }

// runWorker is RunWorker with the function that opens the journal.
func runWorker(ctx context.Context, store *sessions.Store, id, run string, log io.Writer, open func(string) (journalSink, error)) (profile.Status, error) {
	if err := checkRunName(run); err != nil {
		return profile.StatusFailed, fmt.Errorf("session %s: %w", id, err)
	}
	s, err := store.Get(id)
	if err != nil {
		return profile.StatusFailed, err
	}
	hold, err := s.Hold()
	defer hold.Release()
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		fmt.Fprintf(log, "warning: %v\n", err)
	}
	exp, resolved, err := LoadSession(s)
	if err != nil {
		return profile.StatusFailed, err
	}
	variant := variantOf(s, run)
	i := slices.IndexFunc(resolved, func(r Resolved) bool { return r.Name == variant })
	if i < 0 {
		return profile.StatusFailed, fmt.Errorf("session %s has no variant %q", id, variant)
	}
	v := resolved[i]
	claim, err := claimRun(s, run, log)
	if err != nil {
		return profile.StatusFailed, err
	}
	defer claim.Close() // holds the journal's lock: the run is alive
	if err := s.WritePid(run, os.Getpid()); err != nil {
		fmt.Fprintf(log, "warning: %v\n", err)
	}
	if v.External != nil {
		return runExternal(ctx, s, run, v, log)
	}
	jw, err := open(s.JournalPath(run))
	if err != nil {
		return profile.StatusFailed, err
	}
	defer jw.Close()
	return trainRun(ctx, s, run, exp, v, jw, log)
}

// trainRun trains variant v of exp as run of session s, recording into
// the journal jw, which it closes. A journal that lost events is partial
// (the recorder's run_end says so); one that could not be ended has the
// run's exit recorded in its pid file (Session.RecordExit), so the run
// reads as partial, not crashed.
func trainRun(ctx context.Context, s *sessions.Session, run string, exp Experiment, v Resolved, jw journalSink, log io.Writer) (profile.Status, error) {
	if v.Config.Threads > 0 {
		runtime.GOMAXPROCS(v.Config.Threads)
	}
	TuneGC()
	host := profile.LocalHost()
	// The device is opened before run_start so that run_start names the
	// GPU; a device that cannot be opened ends the run as failed.
	dev, closeDev, devErr := OpenDevice(v.Config)
	if devErr == nil {
		defer closeDev()
		backend.Describe(dev, &host)
	}
	rec := profile.NewRecorder(jw, profile.RecorderOptions{Usage: true, OnError: func(err error) {
		fmt.Fprintf(log, "journal: %v\n", err)
	}})
	cfgJSON, err := json.Marshal(v.Config)
	if err != nil {
		cfgJSON = nil
	}
	// run_start waits for the engine's budget plan (train.Options.OnStart)
	// so that it lists what the engine adjusted beside what the launcher
	// did; a run that ends before still gets one, first.
	started := false
	start := func(plan []string) {
		if !started {
			started = true
			rec.RunStart(run, s.ID(), v.Name, cfgJSON, &host, append(slices.Clip(v.Adjusted), plan...)...)
			for _, p := range plan {
				logf(log, "plan: %s", p)
			}
		}
	}
	logf(log, "run %s (variant %s) of session %s, pid %d", run, v.Name, s.ID(), os.Getpid())

	var res *train.Result
	switch {
	case canceled(s):
		err = errCanceledBeforeStart
	case devErr != nil:
		err = devErr
	default:
		res, err = executeRun(ctx, exp, v, dev, rec, start, func(cfg train.Config) {
			if b, merr := json.Marshal(cfg); merr == nil {
				cfgJSON = b // run_start records the config that trains
			}
		}, log)
	}
	start(nil)
	status := RunStatus(ctx, err)
	if errors.Is(err, errCanceledBeforeStart) {
		status = profile.StatusCanceled
	}
	var summary any // nil: the recorder's own summary
	if res != nil {
		// A NaN accuracy (an empty test set) does not encode: fall back.
		if b, merr := json.Marshal(res); merr == nil {
			summary = json.RawMessage(b)
		}
	}
	cerr := rec.Close(status, err, summary)
	if jerr := jw.Close(); cerr == nil {
		cerr = jerr
	}
	incomplete := ""
	if cerr != nil { // events or run_end lost: the run is partial
		incomplete = fmt.Sprintf(" (journal incomplete: %v; the run itself ended %s)", cerr, status)
		if rerr := s.RecordExit(run, os.Getpid(), status, err, cerr); rerr != nil {
			logf(log, "%v", rerr)
		}
		status = profile.StatusPartial
	}
	if err == nil {
		logf(log, "done: %s%s (test accuracy %.4f, %.3fs per epoch)", status, incomplete, res.TestAcc, res.EpochS)
	} else {
		logf(log, "done: %s%s: %v", status, incomplete, err)
	}
	if cerr != nil {
		return status, fmt.Errorf("run %s: journal: %w", run, cerr)
	}
	if status != profile.StatusOK {
		return status, fmt.Errorf("run %s: %s: %w", run, status, err)
	}
	return status, nil
}

// claimRun creates the run's journal file exclusively (mode 0600): a run
// is started once, and a journal that exists means it started or was
// canceled before. The file it returns holds the journal's lock
// (sessions.LockFile), the sign that the run is alive, until it is
// closed; a lock that cannot be taken is a warning on log.
func claimRun(s *sessions.Session, run string, log io.Writer) (*os.File, error) {
	f, err := sessions.OpenRegularFile(s.JournalPath(run), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("run %s of session %s already has a journal (it was started or canceled before)", run, s.ID())
		}
		return nil, err
	}
	if err := sessions.LockFile(f); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		fmt.Fprintf(log, "warning: %v\n", err)
	}
	return f, nil
}

// executeRun trains variant v of exp on dev with Execute, recording into
// rec; progress lines (data, epochs, loader warnings) go to log.
func executeRun(ctx context.Context, exp Experiment, v Resolved, dev device.Device, rec *profile.Recorder, start func([]string), onConfig func(train.Config), log io.Writer) (*train.Result, error) {
	return Execute(ctx, exp, v.Config, ExecOptions{
		Device:   dev,
		Recorder: rec,
		OnStart:  start,
		Size:     freeSettings(v.Variant, v.Config),
		OnConfig: onConfig,
		Load:     load.Options{Warn: func(msg string) { logf(log, "warning: %s", msg) }},
		OnReady: func(ds *data.Dataset, split *data.Split) {
			logf(log, "train %s on %s (%d nodes, %d edges, %d features, %d classes; split %d/%d/%d)",
				v.Config.Model, ds.Name, ds.NumNodes(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses,
				len(split.Train), len(split.Valid), len(split.Test))
		},
		OnEpoch: func(st train.EpochStat) {
			line := fmt.Sprintf("epoch %d/%d  loss %.4f  train %.3f", st.Epoch, v.Config.Epochs, st.Loss, st.TrainAcc)
			if st.Evaluated {
				line += fmt.Sprintf("  val %.3f  test %.3f", st.ValAcc, st.TestAcc)
			}
			logf(log, "%s", line)
		},
	})
}

// RunSequence is the sequencer of a sequential launch: it starts the
// session's runs in launch order, each as its own detached worker process
// of the executable exe (default: this one), waiting for one to end
// before starting the next, whatever its status. When ctx is canceled (the
// sequencer got SIGTERM) or the session is canceled, it passes SIGTERM on
// to the running worker, waits for it, and marks the runs that have not
// started canceled.
func RunSequence(ctx context.Context, store *sessions.Store, id, exe string, log io.Writer) error {
	s, err := store.Get(id)
	if err != nil {
		return err
	}
	st, err := readLaunch(s)
	if err != nil {
		return err
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("sequencer: find the gnnscope executable: %w", err)
		}
	}
	// The session's hold and launch.json's lock tell that the sequencer
	// is alive, with or without its pid file.
	hold, err := s.Hold()
	defer hold.Release()
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		logf(log, "warning: %v", err)
	}
	release, err := lockLaunch(s)
	defer release()
	if err != nil {
		logf(log, "warning: %v", err)
	}
	if err := writeProc(filepath.Join(s.Dir(), sequencerPid), os.Getpid()); err != nil {
		logf(log, "warning: %v", err)
	}
	logf(log, "sequencer of session %s, pid %d: runs %v", id, os.Getpid(), st.Runs)
	for i, run := range st.Runs {
		if ctx.Err() != nil || canceled(s) {
			for _, rest := range st.Runs[i:] {
				if marked, err := markNotStarted(s, rest, profile.StatusCanceled, errCanceledBeforeStart); err != nil {
					logf(log, "run %s: mark canceled: %v", rest, err)
				} else if marked {
					logf(log, "run %s: canceled before it started", rest)
				}
			}
			return context.Canceled
		}
		if _, err := os.Stat(s.JournalPath(run)); err == nil {
			logf(log, "run %s: already has a journal, skipped", run)
			continue
		}
		cmd, warn, err := startWorker(s, store.Root(), exe, run)
		if err != nil {
			logf(log, "run %s: start: %v", run, err)
			markNotStarted(s, run, profile.StatusFailed, fmt.Errorf("the worker did not start: %w", err))
			continue
		}
		if warn != nil {
			logf(log, "run %s: warning: %v", run, warn)
		}
		logf(log, "run %s: started, pid %d", run, cmd.Process.Pid)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		select {
		case werr = <-done:
		case <-ctx.Done():
			logf(log, "run %s: canceling", run)
			if err := terminate(cmd.Process.Pid); err != nil {
				logf(log, "run %s: %v", run, err)
			}
			werr = <-done
		}
		if ctx.Err() != nil || canceled(s) {
			settleCanceled(s, run, log)
		}
		state, serr := s.RunState(run)
		if serr != nil {
			logf(log, "run %s: exited (%s); state: %v", run, exitText(werr), serr)
		} else {
			logf(log, "run %s: exited (%s), status %s", run, exitText(werr), state.Status)
		}
	}
	return nil
}

func logf(w io.Writer, format string, a ...any) {
	fmt.Fprintf(w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, a...)...)
}

// exitText describes how a worker process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
