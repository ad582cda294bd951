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
		statuses []profile.Status
		want     profile.Status
	}{
		{nil, profile.StatusEmpty},
		{[]profile.Status{profile.StatusOK, profile.StatusOK}, profile.StatusOK},
		{[]profile.Status{profile.StatusOK, profile.StatusPending}, profile.StatusRunning},
		{[]profile.Status{profile.StatusOOM, profile.StatusRunning}, profile.StatusRunning},
		{[]profile.Status{profile.StatusOK, profile.StatusFailed, profile.StatusCrashed}, profile.StatusCrashed},
		{[]profile.Status{profile.StatusCanceled, profile.StatusOOM}, profile.StatusOOM},
		{[]profile.Status{profile.StatusOK, profile.StatusCanceled, profile.StatusPartial}, profile.StatusPartial},
		{[]profile.Status{profile.StatusOK, "odd"}, "odd"},
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
	if err != nil || len(states) != 1 || states[0].Status != profile.StatusPending {
		t.Fatalf("launched here: %+v, %v", states, err)
	}
	info, _ := json.Marshal(sessions.ImportInfo{Imported: time.Now(), Version: sessions.ArchiveVersion})
	if err := os.WriteFile(filepath.Join(s.Dir(), "import.json"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	states, err = RunStates(s)
	if err != nil || len(states) != 1 || states[0].Status != profile.StatusCrashed || states[0].Error != NotStartedBeforeExport {
		t.Errorf("imported: %+v, %v", states, err)
	}
}
