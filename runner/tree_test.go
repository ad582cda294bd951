//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// launchCmd launches one external run "a" running command, and kills
// whatever its tree left at the end of the test.
func launchCmd(t *testing.T, command string) (*sessions.Store, *sessions.Session) {
	t.Helper()
	v, err := ParseCmd(command)
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "a"
	st, s := launchTiny(t, 1, false, v)
	t.Cleanup(func() { killOrphans(TrainerProcs(s, "a")) })
	return st, s
}

func runEnded(s *sessions.Session) bool {
	rs, err := s.RunState("a")
	return err == nil && rs.Status != profile.StatusRunning && rs.Status != profile.StatusUnknown
}

// TestLeftoversEndedWithRun: the repro of a trainer that leaves children
// behind (one in its group, one escaped with setsid) that write to the
// journal later: the run ends only once they are gone, ok.
func TestLeftoversEndedWithRun(t *testing.T) {
	_, s := launchCmd(t, `sh -c 'sleep 300 & setsid sh -c "sleep 300; echo late >> \"\$GNNSCOPE_JOURNAL\"" & exit 0'`)
	waitFor(t, "the run to end", func() bool { return runEnded(s) })
	if left := TrainerProcs(s, "a"); len(left) > 0 {
		t.Errorf("processes of the command left after the run ended: %v", left)
	}
	if rs, _ := s.RunState("a"); rs.Status != profile.StatusOK {
		t.Errorf("run: %+v", rs)
	}
	log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "a.log"))
	if !strings.Contains(string(log), "left behind") {
		t.Errorf("the log does not say what was ended:\n%s", log)
	}
}

// TestWorkerDeathThenCancel: the repro of kill -9 of an external run's
// worker: its direct child dies with it (parent-death signal), and
// `run --cancel` ends the trainer's own children instead of saying there
// is nothing to cancel.
func TestWorkerDeathThenCancel(t *testing.T) {
	st, s := launchCmd(t, `sh -c 'sleep 300 & sleep 300 & wait'`)
	waitFor(t, "the trainer's children", func() bool { return len(TrainerProcs(s, "a")) >= 3 })
	pf, err := sessions.ReadPidFile(s.PidPath("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pf.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker and its child to die", func() bool {
		return len(TrainerProcs(s, "a")) == 2 && runEnded(s)
	})
	rep, err := Cancel(st, s.ID())
	if err != nil || rep == nil || !slices.Equal(rep.Orphans, []string{"a"}) {
		t.Fatalf("cancel: %+v, %v", rep, err)
	}
	waitFor(t, "the orphans to go", func() bool { return len(TrainerProcs(s, "a")) == 0 })
}

// TestCancelEndsTree: cancel ends every process the trainer started,
// the run canceled once the last is gone.
func TestCancelEndsTree(t *testing.T) {
	st, s := launchCmd(t, `sh -c 'trap "" INT; sleep 300 & setsid sleep 300 & wait'`)
	waitFor(t, "the trainer's children", func() bool { return len(TrainerProcs(s, "a")) >= 3 })
	if _, err := Cancel(st, s.ID()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to end", func() bool { return runEnded(s) })
	if left := TrainerProcs(s, "a"); len(left) > 0 {
		t.Errorf("processes left after the run ended: %v", left)
	}
	if rs, _ := s.RunState("a"); rs.Status != profile.StatusCanceled {
		t.Errorf("run: %+v", rs)
	}
}
