//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// asWorkerEnv makes the test binary act as `gnnscope worker` (actAsWorker):
// the tests launch it as their workers and sequencer.
const asWorkerEnv = "GNNSCOPE_RUNNER_TEST_AS_WORKER"

// failRunEndEnv makes a worker's journal fail as a full disk would when
// run_end is written.
const failRunEndEnv = "GNNSCOPE_RUNNER_TEST_FAIL_RUN_END"

func TestMain(m *testing.M) {
	// Only a worker's command line: the fuzzer's workers are test
	// binaries too.
	if os.Getenv(asWorkerEnv) == "1" && len(os.Args) > 1 && os.Args[1] == workerCommand {
		os.Exit(actAsWorker(os.Args[1:]))
	}
	if os.Getenv(asWorkerEnv) == "1" && len(os.Args) > 2 && os.Args[1] == rankCommand {
		os.Exit(actAsRank(os.Args[2]))
	}
	os.Setenv(asWorkerEnv, "1") // for the processes the tests start
	os.Exit(m.Run())
}

// actAsWorker runs `worker --store ROOT --session ID (--run RUN | --all)`
// as cli/worker does.
func actAsWorker(args []string) int {
	w, ok := parseWorkerArgs(args)
	if !ok {
		fmt.Fprintln(os.Stderr, "not a worker command line:", args)
		return 2
	}
	store, err := sessions.Open(w.store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if !w.all && os.Getenv(cancelAsStartEnv) == "1" {
		cancelAsStart(store, w)
	}
	ctx, stop := StopContext(context.Background())
	defer stop()
	switch {
	case w.all:
		if err = RunSequence(ctx, store, w.session, "", os.Stderr); errors.Is(err, context.Canceled) {
			err = nil
		}
	case os.Getenv(failRunEndEnv) == "1":
		_, err = runWorker(ctx, store, w.session, w.run, os.Stderr, openFullJournal)
	default:
		_, err = RunWorker(ctx, store, w.session, w.run, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fullJournal is a journal whose disk fills up when run_end comes.
type fullJournal struct{ *sessions.JournalWriter }

func (j fullJournal) WriteEvents(evs []profile.Event) error {
	if slices.ContainsFunc(evs, func(e profile.Event) bool { return e.T == profile.TypeRunEnd }) {
		return &os.PathError{Op: "write", Path: j.Path(), Err: syscall.ENOSPC}
	}
	return j.JournalWriter.WriteEvents(evs)
}

func openFullJournal(path string) (journalSink, error) {
	jw, err := sessions.OpenJournal(path)
	if err != nil {
		return nil, err
	}
	return fullJournal{jw}, nil
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// launchTiny launches runs a and b of synth-tiny (epochs each), or the
// variants given, with the test binary as gnnscope, in a store of its
// own; what is left running at the end of the test is killed.
func launchTiny(t *testing.T, epochs int, parallel bool, variants ...Variant) (*sessions.Store, *sessions.Session) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs, exp.Train.Threads = epochs, 1
	if len(variants) == 0 {
		variants = []Variant{{Name: "a"}, {Name: "b"}}
	}
	s, err := Launch(st, exp, variants, LaunchOptions{Executable: os.Args[0], Parallel: parallel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		seq, runs := sessionProcs(st.Root(), s.ID())
		for _, pids := range runs {
			seq = append(seq, pids...)
		}
		for _, pid := range seq {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		waitFor(t, "the session's processes to go", func() bool {
			seq, runs := sessionProcs(st.Root(), s.ID())
			return len(seq) == 0 && len(runs) == 0
		})
	})
	return st, s
}

// TestCancelWithoutPidFiles: with the pid files of the running run and of
// the sequencer removed (a full disk), the run still reads as running, the
// session is not deleted, and cancel signals the sequencer and the worker
// even though writing the canceled marker fails; the error says so.
func TestCancelWithoutPidFiles(t *testing.T) {
	st, s := launchTiny(t, 100000, false)
	waitFor(t, "run a to train", func() bool {
		js, err := sessions.SummarizeJournal(s.JournalPath("a"))
		_, ok := js.Summary.Metrics["loss"]
		return err == nil && ok
	})
	for _, p := range []string{s.PidPath("a"), filepath.Join(s.Dir(), sequencerPid)} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	states, err := RunStates(s)
	if err != nil || len(states) != 2 || states[0].Status != profile.StatusRunning || states[1].Status != profile.StatusPending {
		t.Fatalf("states without pid files: %+v, %v", states, err)
	}
	if err := st.Delete(s.ID()); err == nil {
		t.Fatal("a running session without pid files was deleted")
	}
	full := errors.New("no space left on device (injected)")
	rep, err := cancelSession(st, s.ID(), func(*sessions.Session) error { return full })
	if !errors.Is(err, full) || !strings.Contains(err.Error(), "signaled") {
		t.Errorf("cancel error %v", err)
	}
	if rep == nil || !rep.Sequencer || !slices.Equal(rep.Signaled, []string{"a"}) {
		t.Fatalf("cancel report %+v", rep)
	}
	waitFor(t, "the runs to end", func() bool {
		states, err := RunStates(s)
		return err == nil && !Active(states)
	})
	states, _ = RunStates(s)
	if states[0].Status != profile.StatusCanceled || states[1].Status != profile.StatusCanceled {
		t.Errorf("after cancel: %+v", states)
	}
	if canceled(s) {
		t.Error("the marker was written though its write failed")
	}
}

// TestRunEndNotWritten: a run whose run_end cannot be written (a full
// disk) reads as partial, with the status it ended with and why its
// journal is incomplete, as its log says; not as crashed, nor as ok.
func TestRunEndNotWritten(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs, exp.Train.Threads = 1, 1
	resolved, err := Resolve(exp, []Variant{{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := createSession(st, exp, resolved, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], workerCommand, "--store", st.Root(), "--session", s.ID(), "--run", "a")
	cmd.Env = append(os.Environ(), failRunEndEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "done: partial (journal incomplete") {
		t.Fatalf("worker: %v\n%s", err, out)
	}
	rs, err := s.RunState("a")
	if err != nil || rs.Status != profile.StatusPartial || !strings.Contains(rs.Error, "journal incomplete") ||
		!strings.Contains(rs.Error, "no space left on device") || !strings.Contains(rs.Error, "the run itself ended ok") {
		t.Errorf("run state %+v, %v", rs, err)
	}
}

// TestLaunchPrivateUnderUmask: under umask 022 nothing a launch writes in
// its session is readable by group or others. Not parallel: the umask is
// the process's (and its workers inherit it).
func TestLaunchPrivateUnderUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ext := &External{Cmd: "sh -c ...", Argv: []string{"sh", "-c", "echo out; echo err >&2"}}
	for _, parallel := range []bool{false, true} {
		var variants []Variant
		if parallel { // and a command's run: the Python client, its log
			variants = []Variant{{Name: "a"}, {Name: "ext", External: ext}}
		}
		st, s := launchTiny(t, 1, parallel, variants...)
		waitFor(t, "the runs to end", func() bool {
			states, err := RunStates(s)
			return err == nil && !Active(states)
		})
		states, _ := RunStates(s)
		for _, r := range states {
			if r.Status != profile.StatusOK {
				t.Errorf("run %s: %s %s", r.Run, r.Status, r.Error)
			}
		}
		if _, err := os.Stat(filepath.Join(s.Dir(), pyclientDir)); parallel && err != nil {
			t.Errorf("no Python client: %v", err)
		}
		if _, err := Cancel(st, s.ID()); err != nil { // writes the canceled marker too
			t.Fatal(err)
		}
		err := filepath.WalkDir(filepath.Join(st.Root(), "sessions"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err == nil && fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v", p, fi.Mode())
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestParseWorkerArgs: only a worker's or sequencer's command line names
// a session's process.
func TestParseWorkerArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
		want workerArgs
	}{
		{[]string{"worker", "--store", "/s", "--session", "id", "--run", "a"}, true, workerArgs{store: "/s", session: "id", run: "a"}},
		{[]string{"worker", "--store=/s", "--session=id", "--all"}, true, workerArgs{store: "/s", session: "id", all: true}},
		{[]string{"run", "--store", "/s", "--session", "id", "--run", "a"}, false, workerArgs{}},
		{[]string{"worker", "--session", "id"}, false, workerArgs{}},
		{[]string{"worker", "--session", "id", "--run", "a", "--all"}, false, workerArgs{}},
		{[]string{"worker", "--session"}, false, workerArgs{}},
	} {
		got, ok := parseWorkerArgs(tc.args)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%v: %+v, %v", tc.args, got, ok)
		}
	}
}

// TestNotStartedReadOnly: a run that never started because the session
// folder was made read-only says so, naming the folder, rather than only
// that its starter is gone. (Root may write anywhere: skipped.)
func TestNotStartedReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes in read-only folders")
	}
	_, s := newSession(t, "")
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	ls := launchState{Mode: ModeParallel, Runs: []string{"a"}, Launcher: thisProc(gone.Process.Pid), Started: time.Now()}
	if err := writeLaunch(s, ls); err != nil {
		t.Fatal(err)
	}
	states, err := RunStates(s)
	if err != nil || len(states) != 1 || states[0].Error != "not started: the process that was to start it is gone" {
		t.Fatalf("writable: %+v, %v", states, err)
	}
	if err := os.Chmod(s.RunsDir(), 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(s.RunsDir(), 0o700)
	states, err = RunStates(s)
	if err != nil || len(states) != 1 || states[0].Status != profile.StatusCrashed ||
		!strings.Contains(states[0].Error, s.RunsDir()+": permission denied") {
		t.Errorf("read-only: %+v, %v", states, err)
	}
}

// TestFIFOsRefused: a FIFO in place of the canceled marker or of a run's
// log is refused, naming it, rather than waited on.
func TestFIFOsRefused(t *testing.T) {
	st, s := newSession(t, "")
	marker, log := filepath.Join(s.Dir(), canceledFile), filepath.Join(s.RunsDir(), "a.log")
	for _, p := range []string{marker, log} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 2)
	go func() { _, err := Cancel(st, s.ID()); done <- err }()
	go func() { _, _, err := startWorker(s, st.Root(), "/bin/true", "a"); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, sessions.ErrNotRegular) || !(strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), log)) {
				t.Errorf("FIFO: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	}
}
