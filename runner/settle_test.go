//go:build linux

package runner

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// cancelAsStartEnv makes a test worker be canceled as it starts: it
// claims its journal, the session is canceled, and SIGTERM kills it
// before it handles signals (the race of a cancel and the sequencer
// starting the next worker).
const cancelAsStartEnv = "GNNSCOPE_RUNNER_TEST_CANCEL_AS_START"

func cancelAsStart(store *sessions.Store, w workerArgs) {
	s, err := store.Get(w.session)
	if err != nil {
		return
	}
	if _, err := claimRun(s, w.run, os.Stderr); err != nil {
		return
	}
	writeCanceled(s)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	time.Sleep(time.Minute)
}

// TestCancelAsWorkerStarts: the repro of a cancel that lands as the
// sequencer starts a worker: the run reads canceled, not crashed, and
// the next one was not started.
func TestCancelAsWorkerStarts(t *testing.T) {
	t.Setenv(cancelAsStartEnv, "1")
	_, s := launchTiny(t, 1, false)
	waitFor(t, "the runs to settle", func() bool {
		states, err := RunStates(s)
		return err == nil && !Active(states) && func() bool { in, _ := s.InUse(); return !in }()
	})
	states, _ := RunStates(s)
	for _, r := range states {
		if r.Status != profile.StatusCanceled {
			t.Errorf("run %s: %+v", r.Run, r)
		}
	}
}
