package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// TestListAfterLaunchFromForm: a session launched from the form whose
// folder the list reads before its session.json exists (n, ctrl+s, esc)
// shows as pending, not as an error, and the next poll after
// session.json appears shows the session as it is, without R.
func TestListAfterLaunchFromForm(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 100, 30, common.Options{})
	const id = "20260102-070000-eeee"
	meta := filepath.Join(st.SessionsDir(), id, "session.json")
	hs.m.setLauncher(func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		hs.launched = append(hs.launched, exp)
		s := fixture.Add(t, st, fixture.Session{ID: id, Name: exp.Name,
			Variants: []string{"baseline", "optimized"}, Runs: []fixture.Run{fixture.Baseline, fixture.Optimized}})
		// the folder exists, session.json not yet
		if err := os.Rename(meta, meta+".later"); err != nil {
			t.Fatal(err)
		}
		return s, nil
	})
	hs.press("n", "ctrl+s", "esc")
	if !on[*sessionlist.Model](hs.m) || len(hs.launched) != 1 {
		t.Fatalf("after n, ctrl+s, esc: screen %q, %d launches", hs.m.Screen().Title(), len(hs.launched))
	}
	if r := hs.launched[0].Repeats; r != 3 {
		t.Errorf("the form's default experiment runs %d repeats, want 3 (an interval over runs)", r)
	}
	first := entry(hs.m.list.Entries(), id)
	if first == nil || first.Status != profile.StatusPending || first.Err != "" || !hs.m.list.Live() {
		t.Fatalf("the launch read before its session.json: %+v (live %v)", first, hs.m.list.Live())
	}
	if err := os.Rename(meta+".later", meta); err != nil {
		t.Fatal(err)
	}
	hs.run(hs.m.list.Poll())
	got := entry(hs.m.list.Entries(), id)
	if got == nil || got.Status != "ok" || got.Err != "" || got.Speedup.Ratio == 0 {
		t.Fatalf("after session.json appeared, one poll: %+v", got)
	}
}

func entry(entries []sessionlist.Entry, id string) *sessionlist.Entry {
	for i := range entries {
		if entries[i].ID == id {
			return &entries[i]
		}
	}
	return nil
}
