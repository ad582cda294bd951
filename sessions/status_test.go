package sessions

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func TestRunStatus(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	ev := sampleEvents()
	start := line(ev[0]) + line(ev[1])

	// finished runs: status from run_end, pid irrelevant
	for _, status := range []profile.Status{profile.StatusOK, profile.StatusOOM, profile.StatusFailed, profile.StatusCanceled} {
		run := string(status)
		appendRaw(t, s.JournalPath(run), start+line(profile.Event{T: profile.TypeRunEnd, Status: status, Error: "e"}))
		s.WritePid(run, os.Getpid())
		got, err := RunStatus(s, run)
		if err != nil || got != status {
			t.Errorf("%s: got %q, %v", status, got, err)
		}
		rs, _ := s.RunState(run)
		if !rs.Finished() || rs.Error != "e" || rs.Size == 0 || rs.Pid != os.Getpid() {
			t.Errorf("%s: %+v", status, rs)
		}
	}

	// running: our own pid
	appendRaw(t, s.JournalPath("live"), start)
	if err := s.WritePid("live", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if got, _ := RunStatus(s, "live"); got != profile.StatusRunning {
		t.Errorf("live: %q", got)
	}
	// a run_end torn mid-write is no run_end
	appendRaw(t, s.JournalPath("live"), `{"t":"run_end","status":"o`)
	if got, _ := RunStatus(s, "live"); got != profile.StatusRunning {
		t.Errorf("torn run_end: %q", got)
	}

	// crashed: the process is gone
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, s.JournalPath("dead"), start)
	os.WriteFile(s.PidPath("dead"), []byte(`{"pid":`+itoa(cmd.Process.Pid)+`}`), 0o644)
	if got, _ := RunStatus(s, "dead"); got != profile.StatusCrashed {
		t.Errorf("dead: %q", got)
	}
	// a plain-number pid file works too
	os.WriteFile(s.PidPath("dead"), []byte(itoa(cmd.Process.Pid)+"\n"), 0o644)
	if got, _ := RunStatus(s, "dead"); got != profile.StatusCrashed {
		t.Errorf("dead (plain pid): %q", got)
	}
	// a pid reused by another process is not the writer
	if _, _, ok := procStat(os.Getpid()); ok {
		b, _ := json.Marshal(PidFile{Pid: os.Getpid(), Start: 1})
		appendRaw(t, s.JournalPath("reused"), start)
		os.WriteFile(s.PidPath("reused"), b, 0o644)
		if got, _ := RunStatus(s, "reused"); got != profile.StatusCrashed {
			t.Errorf("reused pid: %q", got)
		}
	}
	// another host: cannot tell
	b, _ := json.Marshal(PidFile{Pid: os.Getpid(), Host: "elsewhere.invalid"})
	appendRaw(t, s.JournalPath("remote"), start)
	os.WriteFile(s.PidPath("remote"), b, 0o644)
	if got, _ := RunStatus(s, "remote"); got != profile.StatusUnknown {
		t.Errorf("remote: %q", got)
	}
	// no pid file
	appendRaw(t, s.JournalPath("nopid"), start)
	if got, _ := RunStatus(s, "nopid"); got != profile.StatusUnknown {
		t.Errorf("no pid: %q", got)
	}
	// pid file, no journal yet
	s.WritePid("pending", os.Getpid())
	if got, _ := RunStatus(s, "pending"); got != profile.StatusRunning {
		t.Errorf("pending: %q", got)
	}
	// neither
	if _, err := RunStatus(s, "nothing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nothing: %v", err)
	}
	if _, err := RunStatus(s, "../x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad name: %v", err)
	}
	runs, err := s.Runs()
	if err != nil || len(runs) != 10 {
		t.Errorf("runs %v %v", runs, err)
	}
}

// run_end is found behind a last line longer than the first chunk read.
func TestLastEventLongLines(t *testing.T) {
	st := newStore(t)
	s, _ := st.Create(SessionMeta{})
	big := profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOOM, Summary: json.RawMessage(`{"x":"` + string(make([]byte, 0)) + repeat('y', 300<<10) + `"}`)}
	appendRaw(t, s.JournalPath("r"), repeat('\n', 10)+line(sampleEvents()[1])+line(big)+"\n\n")
	if got, err := RunStatus(s, "r"); err != nil || got != profile.StatusOOM {
		t.Errorf("got %q %v", got, err)
	}
	// garbage after a span only: not finished
	appendRaw(t, s.JournalPath("g"), line(sampleEvents()[1])+repeat('z', 200<<10)+"\n")
	if got, _ := RunStatus(s, "g"); got != profile.StatusUnknown {
		t.Errorf("garbage: %q", got)
	}
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
