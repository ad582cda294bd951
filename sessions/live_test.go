//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || illumos

package sessions

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// TestLockedRunWithoutPidFile: a run whose writer holds the journal's
// lock is running though its pid file is missing, and its session cannot
// be deleted; once the lock is gone it can.
func TestLockedRunWithoutPidFile(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	ev := sampleEvents()
	appendRaw(t, s.JournalPath("live"), line(ev[0])+line(ev[1]))
	f, err := os.OpenFile(s.JournalPath("live"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := LockFile(f); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.PidPath("live")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pid file: %v", err)
	}
	if rs, err := s.RunState("live"); err != nil || rs.Status != profile.StatusRunning {
		t.Fatalf("locked run without pid file: %+v, %v", rs, err)
	}
	if err := st.Delete(s.ID()); err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("delete of a locked run's session: %v", err)
	}
	if _, err := os.Stat(s.Dir()); err != nil {
		t.Fatalf("session deleted: %v", err)
	}
	// the lock wins over a pid file naming a process that is gone
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePid("live", gone.Process.Pid); err != nil {
		t.Fatal(err)
	}
	tl, err := s.TailRun("live", TailOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.RunState("live"); rs.Status != profile.StatusRunning || !tl.opts.Alive() {
		t.Errorf("locked run with a stale pid file: %+v, tail alive %v", rs, tl.opts.Alive())
	}
	f.Close()
	if rs, _ := s.RunState("live"); rs.Status != profile.StatusCrashed || tl.opts.Alive() {
		t.Errorf("after the writer let go, stale pid file: %+v, tail alive %v", rs, tl.opts.Alive())
	}
	os.Remove(s.PidPath("live"))
	if rs, _ := s.RunState("live"); rs.Status != profile.StatusUnknown {
		t.Errorf("after the writer let go: %+v", rs)
	}
	if err := st.Delete(s.ID()); err != nil {
		t.Errorf("delete after the writer let go: %v", err)
	}
}

// TestDeleteRefusesHeldSession: a session a process holds (a sequencer
// between runs, say, with no run running and no pid file) is not deleted.
func TestDeleteRefusesHeldSession(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	hold, err := s.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if in, known := s.InUse(); !in || !known {
		t.Errorf("held session: in use %v, known %v", in, known)
	}
	if err := st.Delete(s.ID()); err == nil || !strings.Contains(err.Error(), "holds it") {
		t.Fatalf("delete of a held session: %v", err)
	}
	// a session folder without session.json is not deleted while held
	if err := os.Remove(s.Dir() + "/" + metaFile); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(s.ID()); err == nil {
		t.Fatal("a held folder without session.json was deleted")
	}
	hold.Release()
	if in, known := s.InUse(); in || !known {
		t.Errorf("released session: in use %v, known %v", in, known)
	}
	if err := st.Delete(s.ID()); err != nil {
		t.Errorf("delete after release: %v", err)
	}
}

// TestRecordExit: a writer that could not end its journal (a full disk)
// but recorded its exit in the pid file reads as partial, with that
// status in its error, not as crashed.
func TestRecordExit(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	ev := sampleEvents()
	appendRaw(t, s.JournalPath("full"), line(ev[0])+line(ev[1]))
	if err := s.WritePid("full", pid); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.PidPath("full")); err != nil || fi.Size() != PidFileSize {
		t.Fatalf("pid file: %v, %v", fi, err)
	}
	if rs, _ := s.RunState("full"); rs.Status != profile.StatusCrashed {
		t.Fatalf("before the exit is recorded: %+v", rs)
	}
	jerr := &os.PathError{Op: "write", Path: s.JournalPath("full"), Err: syscall.ENOSPC}
	if err := s.RecordExit("full", pid, profile.StatusOK, nil, jerr); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.PidPath("full")); err != nil || fi.Size() != PidFileSize {
		t.Errorf("pid file after the exit: %v, %v", fi, err)
	}
	rs, err := s.RunState("full")
	if err != nil || rs.Status != profile.StatusPartial || !strings.Contains(rs.Error, "journal incomplete") ||
		!strings.Contains(rs.Error, "no space left on device") {
		t.Errorf("recorded exit: %+v, %v", rs, err)
	}
	// a long error is cut to fit the pid file's size
	long := errors.New(strings.Repeat("e", 4000))
	if err := s.RecordExit("full", pid, profile.StatusFailed, long, jerr); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(s.PidPath("full")); fi.Size() != PidFileSize {
		t.Errorf("pid file of a long error: %d bytes", fi.Size())
	}
	if rs, _ := s.RunState("full"); rs.Status != profile.StatusPartial || !strings.Contains(rs.Error, "the run itself ended failed") {
		t.Errorf("long error: %+v", rs)
	}
	// a run_end in the journal wins
	appendRaw(t, s.JournalPath("full"), line(profile.Event{T: profile.TypeRunEnd, Status: profile.StatusCanceled}))
	if rs, _ := s.RunState("full"); rs.Status != profile.StatusCanceled || rs.Error != "" {
		t.Errorf("with run_end: %+v", rs)
	}
}

// within fails the test if fn does not return in a few seconds: a FIFO
// would block it.
func within(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s hangs on a FIFO", what)
		return nil
	}
}

// TestFIFOJournalRefused: a FIFO in place of a journal or a pid file is
// refused with an error naming it, never waited on.
func TestFIFOJournalRefused(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	fifo := s.JournalPath("fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("%s: %v", what, err)
		}
	}
	check("RunState", within(t, "RunState", func() error { _, err := s.RunState("fifo"); return err }))
	check("RunStates", within(t, "RunStates", func() error { _, err := s.RunStates(); return err }))
	check("ReadJournal", within(t, "ReadJournal", func() error { _, _, err := ReadJournal(fifo); return err }))
	check("SummarizeJournal", within(t, "SummarizeJournal", func() error { _, err := SummarizeJournal(fifo); return err }))
	check("OpenJournal", within(t, "OpenJournal", func() error { _, err := OpenJournal(fifo); return err }))
	check("tail", within(t, "tail", func() error { _, err := NewTailer(fifo, TailOptions{}).Poll(); return err }))
	list, err := st.List()
	if err != nil || len(list) != 1 || !strings.Contains(list[0].Err, "FIFO") {
		t.Errorf("list: %+v, %v", list, err)
	}
	pid := s.PidPath("fifo")
	if err := syscall.Mkfifo(pid, 0o600); err != nil {
		t.Fatal(err)
	}
	check2 := within(t, "ReadPidFile", func() error { _, err := ReadPidFile(pid); return err })
	if !errors.Is(check2, ErrNotRegular) || !strings.Contains(check2.Error(), pid) {
		t.Errorf("ReadPidFile: %v", check2)
	}
	// the other runs are still listed, and the session can go
	ev := sampleEvents()
	appendRaw(t, s.JournalPath("good"), line(ev[0])+line(ev[1])+line(profile.Event{T: profile.TypeRunEnd}))
	if states, err := s.RunStates(); len(states) != 1 || states[0].Run != "good" || !errors.Is(err, ErrNotRegular) {
		t.Errorf("states beside a FIFO: %+v, %v", states, err)
	}
	if err := within(t, "Delete", func() error { return st.Delete(s.ID()) }); err != nil {
		t.Errorf("delete of a session with a FIFO: %v", err)
	}
}
