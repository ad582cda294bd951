//go:build linux

package run_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
)

// TestCancelWaitsForStubbornTrainer: the repro of a trainer that ignores
// SIGINT and SIGTERM: `run --cancel` does not say canceled while it runs
// on. It says what it waits for, and either returns once every process
// of the command is gone (the run canceled) or says the run is still
// stopping while it is; never success with the trainer alive.
func TestCancelWaitsForStubbornTrainer(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	stubborn := script(t, dir, "stubborn", "trap '' INT TERM\nsleep 300 &\necho up > "+dir+"/stubborn\nwhile :; do sleep 0.1; done\n")
	if _, stderr, err := clitest.Run(t, "run", "--cmd", "stubborn="+stubborn); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	t.Cleanup(func() { clitest.StopAll(t, home, s) })
	waitFile(t, filepath.Join(dir, "stubborn"))
	out, stderr, err := clitest.Run(t, "run", "--cancel", "last")
	left := runner.TrainerProcs(s, "stubborn")
	switch {
	case err == nil && len(left) > 0:
		t.Fatalf("cancel succeeded with the trainer's processes %v alive\n%s%s", left, out, stderr)
	case err != nil && !strings.Contains(err.Error()+stderr, "still stopping"):
		t.Fatalf("cancel: %v\n%s", err, stderr)
	case err != nil:
		t.Logf("the machine is slow: %v", err)
		return
	}
	if !strings.Contains(stderr, "waiting for stubborn to stop") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	if st, _ := s.RunState("stubborn"); st.Status != profile.StatusCanceled {
		t.Errorf("run %+v", st)
	}
}
