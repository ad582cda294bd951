package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestSessionStatus(t *testing.T) {
	for _, c := range []struct {
		statuses []string
		want     string
	}{
		{nil, StatusEmpty},
		{[]string{profile.StatusOK, profile.StatusOK}, profile.StatusOK},
		{[]string{profile.StatusOK, StatusPending}, sessions.StatusRunning},
		{[]string{profile.StatusOOM, sessions.StatusRunning}, sessions.StatusRunning},
		{[]string{profile.StatusOK, profile.StatusFailed, sessions.StatusCrashed}, sessions.StatusCrashed},
		{[]string{profile.StatusCanceled, profile.StatusOOM}, profile.StatusOOM},
		{[]string{profile.StatusOK, "odd"}, "odd"},
	} {
		if got := SessionStatus(c.statuses); got != c.want {
			t.Errorf("%v: %s, want %s", c.statuses, got, c.want)
		}
	}
}

// TestRunStatesImported: in an imported session, runs that were launched
// but had not started read as crashed, whatever the exporting host's
// processes do.
func TestRunStatesImported(t *testing.T) {
	_, s := newSession(t, "")
	ls := launchState{Mode: ModeParallel, Runs: []string{"baseline"}, Launcher: thisProc(os.Getpid())}
	b, _ := json.Marshal(ls)
	if err := os.WriteFile(filepath.Join(s.Dir(), launchFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	states, err := RunStates(s)
	if err != nil || len(states) != 1 || states[0].Status != StatusPending {
		t.Fatalf("launched here: %+v, %v", states, err)
	}
	info, _ := json.Marshal(sessions.ImportInfo{Imported: time.Now(), Version: sessions.ArchiveVersion})
	if err := os.WriteFile(filepath.Join(s.Dir(), "import.json"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	states, err = RunStates(s)
	if err != nil || len(states) != 1 || states[0].Status != sessions.StatusCrashed || states[0].Error != NotStartedBeforeExport {
		t.Errorf("imported: %+v, %v", states, err)
	}
}
