//go:build linux

package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
)

// TestRmAndCancelWithoutPidFiles: with the pid files of the running run
// and of the sequencer gone (a full disk), 'sessions rm' refuses the
// running session and 'run --cancel' still stops it; then rm deletes it.
func TestRmAndCancelWithoutPidFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := startLong(t, home)
	var pids []int
	for _, p := range []string{s.PidPath("baseline"), filepath.Join(s.Dir(), "sequencer.pid")} {
		var pf struct{ Pid int }
		if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &pf) == nil && pf.Pid > 1 {
			pids = append(pids, pf.Pid)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // StopAll finds processes by their pid files
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	_, _, err := clitest.Run(t, "sessions", "rm", s.ID(), "--yes")
	if err == nil || !strings.Contains(err.Error(), "running") {
		t.Fatalf("rm of a running session without pid files: %v", err)
	}
	if _, err := os.Stat(s.Dir()); err != nil {
		t.Fatalf("the session is gone: %v", err)
	}
	out, stderr, err := clitest.Run(t, "run", "--cancel", s.ID())
	if err != nil || !strings.Contains(stderr, "sent SIGTERM to baseline") || !strings.Contains(out, s.ID()+" canceled") {
		t.Fatalf("cancel: %v\n%s\n%s", err, out, stderr)
	}
	states, err := runner.RunStates(s)
	if err != nil || len(states) != 2 {
		t.Fatalf("states %+v, %v", states, err)
	}
	for _, r := range states {
		if r.Status != profile.StatusCanceled {
			t.Errorf("run %s: %s", r.Run, r.Status)
		}
	}
	if _, _, err := clitest.Run(t, "sessions", "rm", s.ID(), "--yes"); err != nil {
		t.Errorf("rm after cancel: %v", err)
	}
}
