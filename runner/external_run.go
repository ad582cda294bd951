package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// CancelGrace is how long a canceled command has after SIGINT before it
// gets SIGTERM, and after SIGTERM before SIGKILL.
const CancelGrace = 5 * time.Second

// Bounds of the stderr tail that becomes a failed run's error.
const (
	errTailLines = 10
	errTailBytes = 2048
)

// runExternal supervises the command of external variant v as run of
// session s: it starts the command in a process group of its own (killed
// if this process dies, on Linux, where this process is also the
// subreaper of the command's orphans), with the gnnscope variables in its
// environment (see External.environ), stdout appended to runs/<run>.log
// and stderr copied there, waits for it, and ends the journal unless the
// command did (endExternal). ctx canceled (SIGTERM or SIGINT to this
// process, as Cancel sends) passes SIGINT to the command's group, SIGTERM
// after CancelGrace, SIGKILL after another. Once the command exits, what
// it left behind is ended (endTree) before the run ends. With
// External.Listen, a collector receives the events of the command's ranks
// (startCollector) from before the command starts until its ranks have
// said bye after it ended (stopCollector). The caller has claimed the
// journal and written the pid file.
func runExternal(ctx context.Context, s *sessions.Session, run string, v Resolved, log io.Writer) (profile.Status, error) {
	started := time.Now()
	if canceled(s) {
		return endExternal(s, run, v, started, profile.StatusCanceled, errCanceledBeforeStart.Error(), nil)
	}
	logFile, err := sessions.OpenRegularFile(filepath.Join(s.RunsDir(), run+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return endExternal(s, run, v, started, profile.StatusFailed, err.Error(), nil)
	}
	defer logFile.Close()
	ext := v.External
	if ext.Listen != "" {
		log = &lockedWriter{w: log} // the collector logs from its own goroutines
	}
	col, colEnv, err := startCollector(s, run, ext, log)
	if err != nil {
		return endExternal(s, run, v, started, profile.StatusFailed, err.Error(), nil)
	}
	cmd := exec.Command(ext.Argv[0], ext.Argv[1:]...)
	cmd.Dir = ext.Cwd
	cmd.Env = ext.environ(os.Environ(), s.JournalPath(run), s.ID(), run, v.Name, filepath.Join(s.Dir(), pyclientDir), colEnv)
	cmd.Stdout = logFile
	pr, pw, err := os.Pipe()
	if err != nil {
		stopCollector(col, run, log)
		return endExternal(s, run, v, started, profile.StatusFailed, err.Error(), nil)
	}
	defer pr.Close()
	cmd.Stderr = pw
	ownGroup(cmd)
	if err := becomeSubreaper(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		logf(log, "warning: orphans of the command will not be ended with it: %v", err)
	}
	// The parent-death signal follows the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	logf(log, "run %s (variant %s) of session %s: %s", run, v.Name, s.ID(), strings.Join(ext.Argv, " "))
	started = time.Now()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		stopCollector(col, run, log)
		return endExternal(s, run, v, started, profile.StatusFailed, fmt.Sprintf("start %s: %v", ext.Argv[0], err), nil)
	}
	tail := &tailBuffer{max: errTailBytes}
	copied := make(chan struct{})
	go func() {
		io.Copy(io.MultiWriter(logFile, tail), pr)
		close(copied)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	stopped := false
	select {
	case werr = <-done:
	case <-ctx.Done():
		stopped = true
		logf(log, "run %s: canceling the command (pid %d)", run, cmd.Process.Pid)
		werr = stopGroup(cmd.Process.Pid, done, log)
	}
	// The run ends with its last process: what the command left behind
	// (its group, orphans inherited as their subreaper) is ended first,
	// so nothing writes to the journal after run_end.
	if n := endTree(cmd.Process.Pid, time.Second, CancelGrace, log); n > 0 {
		logf(log, "run %s: ended %d process(es) the command left behind", run, n)
	}
	select {
	case <-copied:
	case <-time.After(time.Second): // a process out of reach holds stderr
	}
	// A command that ended badly in a canceled session was canceled, even
	// if the signal reached it before this process (a signal to the group).
	status, text := exitOutcome(werr, stopped || (werr != nil && canceled(s)), tail.lines(errTailLines))
	logf(log, "run %s: command ended (%s)", run, exitText(werr))
	// ranks on other machines may still be sending: their byes end the run
	stopCollector(col, run, log)
	if v.External.TorchProfile > 0 {
		attachTorchTraces(s, run, log)
	}
	return endExternal(s, run, v, started, status, text, treeUsage(cmd.ProcessState, started))
}

// treeUsage is the usage of a command that ended: the CPU time of its
// process tree (the command's own and that of every descendant it waited
// for, such as DataLoader workers), the wall time since started and the
// load average now; nil when it did not end. The time its threads waited
// for a CPU is not known for a tree: 0.
func treeUsage(ps *os.ProcessState, started time.Time) *profile.Usage {
	if ps == nil {
		return nil
	}
	return &profile.Usage{CPUS: (ps.UserTime() + ps.SystemTime()).Seconds(), WallS: time.Since(started).Seconds(), Load: profile.LoadAverage()}
}

// stopGroup asks the process group pid leads to stop: SIGINT, then
// SIGTERM and SIGKILL each after CancelGrace; it returns the command's
// wait error.
func stopGroup(pid int, done <-chan error, log io.Writer) error {
	for _, sig := range groupStopSignals {
		if err := signalGroup(pid, sig); err != nil {
			logf(log, "signal %v to group %d: %v", sig, pid, err)
		}
		select {
		case err := <-done:
			return err
		case <-time.After(CancelGrace):
		}
	}
	return <-done
}

// exitOutcome is the status and error of a command that ended with wait
// error werr: canceled when it was stopped, ok for exit 0, crashed when a
// signal killed it, failed otherwise (the stderr tail as error).
func exitOutcome(werr error, stopped bool, stderr string) (status profile.Status, text string) {
	switch {
	case stopped:
		return profile.StatusCanceled, "canceled"
	case werr == nil:
		return profile.StatusOK, ""
	}
	if sig, ok := killedBy(werr); ok {
		text = "killed by signal " + sig
		if stderr != "" {
			text += "\n" + stderr
		}
		return profile.StatusCrashed, text
	}
	if stderr == "" {
		stderr = werr.Error()
	}
	return profile.StatusFailed, stderr
}

// endExternal ends an external run's journal unless the command ended it:
// it appends run_start when the journal has none (the command never
// started the client), dated started, then run_end with status and text.
// A run_end the command wrote is kept, and its status returned. usage,
// when known, is the command's (treeUsage), for the run_end it writes.
func endExternal(s *sessions.Session, run string, v Resolved, started time.Time, status profile.Status, text string, usage *profile.Usage) (profile.Status, error) {
	path := s.JournalPath(run)
	hasStart, end, err := journalEnds(path)
	if err != nil {
		return profile.StatusFailed, fmt.Errorf("run %s: %w", run, err)
	}
	if end != nil {
		status = end.Status
		if status == "" {
			status = profile.StatusOK
		}
		return status, outcomeErr(run, status, end.Error)
	}
	jw, err := sessions.OpenJournal(path)
	if err != nil {
		recordExit(s, run, status, text, err)
		return status, fmt.Errorf("run %s: journal: %w", run, err)
	}
	var evs []profile.Event
	if !hasStart {
		host := profile.LocalHost()
		evs = append(evs, profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: run, Session: s.ID(),
			Variant: v.Name, Config: v.External.config(), Host: &host, Wall: started.UTC().Format(time.RFC3339Nano)})
	}
	evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: status, Error: text, Usage: usage})
	err = jw.WriteEvents(evs)
	if cerr := jw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		recordExit(s, run, status, text, err)
		return status, fmt.Errorf("run %s: journal: %w", run, err)
	}
	return status, outcomeErr(run, status, text)
}

// recordExit records in the run's pid file the status of an external run
// whose journal could not be ended (see sessions.Session.RecordExit), so
// it does not read as crashed; the error text is the command's.
func recordExit(s *sessions.Session, run string, status profile.Status, text string, journalErr error) {
	var runErr error
	if text != "" {
		runErr = errors.New(text)
	}
	s.RecordExit(run, os.Getpid(), status, runErr, journalErr)
}

// outcomeErr is RunWorker's error for a run that ended with status.
func outcomeErr(run string, status profile.Status, text string) error {
	if status == profile.StatusOK {
		return nil
	}
	if text == "" {
		return fmt.Errorf("run %s: %s", run, status)
	}
	return fmt.Errorf("run %s: %s: %s", run, status, text)
}

// journalEnds scans a journal: whether it has a run_start, and its run_end
// (nil if none). A journal that does not exist has neither.
func journalEnds(path string) (hasStart bool, end *profile.Event, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	_, err = sessions.ScanJournal(f, func(e *profile.Event) error {
		switch e.T {
		case profile.TypeRunStart:
			hasStart = true
		case profile.TypeRunEnd:
			c := *e
			c.Summary = nil
			end = &c
		}
		return nil
	})
	return hasStart, end, err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lines returns the last n non-blank lines, trimmed.
func (t *tailBuffer) lines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	var out []string
	for i := len(all) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimRight(all[i], " \t\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}
