package sessions

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// finishedRun writes a complete journal for run (run_start, run_end ok).
func finishedRun(t *testing.T, s *Session, run string) {
	t.Helper()
	j, err := s.OpenJournal(run)
	if err != nil {
		t.Fatal(err)
	}
	rec := profile.NewRecorder(j, profile.RecorderOptions{})
	rec.RunStart(run, s.ID(), run, nil, nil)
	if err := rec.Close(profile.StatusOK, nil, nil); err != nil {
		t.Fatal(err)
	}
	j.Close()
}

// Issue 37, point 4: a full disk as a run starts leaves an empty pid
// file. The session's other runs still read, the run is "unknown, check
// the process", and the session can be deleted.
func TestEmptyPidFileDoesNotFailTheSession(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	finishedRun(t, s, "baseline")
	for _, torn := range []string{"", `{"pid":12`, "   \n"} {
		if err := os.WriteFile(s.PidPath("optimized"), []byte(torn), 0o600); err != nil {
			t.Fatal(err)
		}
		states, err := s.RunStates()
		if err != nil {
			t.Fatalf("pid file %q: %v", torn, err)
		}
		if len(states) != 2 || states[0].Status != profile.StatusOK {
			t.Fatalf("pid file %q: the finished baseline is hidden: %+v", torn, states)
		}
		if r := states[1]; r.Status != profile.StatusUnknown || !strings.Contains(r.Error, "check") {
			t.Errorf("pid file %q: %+v, want unknown", torn, r)
		}
	}
	// with a journal that no process holds, the run's writer is gone
	j, err := s.OpenJournal("optimized")
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if r, err := s.RunState("optimized"); err != nil || (r.Status != profile.StatusCrashed && r.Status != profile.StatusUnknown) {
		t.Errorf("torn pid file, free journal: %+v, %v", r, err)
	}
	if _, err := ReadPidFile(s.PidPath("optimized")); !errors.Is(err, ErrBadPidFile) {
		t.Errorf("ReadPidFile: %v, want ErrBadPidFile", err)
	}
	if err := st.Delete(s.ID()); err != nil {
		t.Errorf("delete: %v", err)
	}
}

// RecordExit on a run without a pid file writes it whole (atomically),
// never an empty file that a full disk would leave.
func TestRecordExitWithoutPidFile(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExit("a", os.Getpid(), profile.StatusFailed, errors.New("boom"), errors.New("no space")); err != nil {
		t.Fatal(err)
	}
	pf, err := ReadPidFile(s.PidPath("a"))
	if err != nil || pf.Exit != profile.StatusFailed {
		t.Errorf("%+v, %v", pf, err)
	}
}
