package sessionlist

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// waitChange waits for w's next change report, failing after a generous
// deadline.
func waitChange(t *testing.T, w *watcher) {
	t.Helper()
	got := make(chan any, 1)
	go func() { got <- w.wait() }()
	select {
	case msg := <-got:
		if _, ok := msg.(changedMsg); !ok {
			t.Fatalf("wait returned %T, want changedMsg", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10 s")
	}
}

// TestWatcher: a folder created in the watched folder is reported, by
// fsnotify and by the polling fallback alike, and a closed watcher's
// wait returns nil.
func TestWatcher(t *testing.T) {
	for _, polling := range []bool{false, true} {
		dir := t.TempDir()
		var w *watcher
		if polling {
			w = &watcher{changed: make(chan struct{}, 1), done: make(chan struct{})}
			go w.poll(dir, WatchPoll)
		} else {
			w = newWatcher(dir)
			if w.fs == nil {
				t.Log("fsnotify is not available here: the watcher polls")
			}
		}
		time.Sleep(2 * WatchPoll) // the poller's first look
		if err := os.Mkdir(filepath.Join(dir, "20260102-030400-aaaa"), 0o700); err != nil {
			t.Fatal(err)
		}
		waitChange(t, w)
		w.close()
		w.close() // twice is harmless
		if msg := w.wait(); msg != nil {
			t.Errorf("polling %v: wait after close returned %T", polling, msg)
		}
	}
}

// TestWatcherFallback: where fsnotify accepts the watch but sends
// nothing (here: the watch removed, as on a file system written from
// another host), a session folder created is still reported by the slow
// look at the folder's modification time.
func TestWatcherFallback(t *testing.T) {
	dir := t.TempDir()
	w := watchEvery(dir, WatchPoll)
	defer w.close()
	if w.fs == nil {
		t.Skip("fsnotify is not available here: the watcher polls (TestWatcher)")
	}
	if err := w.fs.Remove(dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * WatchPoll) // the poller's first look
	select {
	case <-w.changed: // what removing the watch may have sent
	default:
	}
	if err := os.Mkdir(filepath.Join(dir, "20260102-030400-aaaa"), 0o700); err != nil {
		t.Fatal(err)
	}
	waitChange(t, w)
}

// TestChangedPolls: a change of the sessions folder makes the list poll,
// so a session created elsewhere appears; a change during a poll polls
// again once it is done.
func TestChangedPolls(t *testing.T) {
	st := fixture.Standard(t)
	hs := newHarness(t, st, 100, 24)
	n := len(hs.m.Entries())
	hs.m.watch = &watcher{changed: make(chan struct{}, 1), done: make(chan struct{})}
	hs.m.watch.close() // its wait returns at once: the harness runs commands to the end
	fixture.Add(t, st, fixture.Session{ID: "20260103-010101-zzzz", Variants: []string{"baseline"}})
	hs.run(func() tea.Msg { return changedMsg{} })
	if got := hs.m.Entries(); len(got) != n+1 || got[0].ID != "20260103-010101-zzzz" {
		t.Fatalf("after a change: %d entries, first %q", len(got), got[0].ID)
	}
	hs.m.polling = true
	cmd := hs.m.Update(changedMsg{})
	if !hs.m.stale || cmd == nil {
		t.Fatalf("a change during a poll: stale %v", hs.m.stale)
	}
	fixture.Add(t, st, fixture.Session{ID: "20260103-020202-yyyy", Variants: []string{"baseline"}})
	hs.run(func() tea.Msg { return polledMsg{} }) // the poll under way ends: another starts
	if got := hs.m.Entries(); hs.m.stale || len(got) != n+2 || got[0].ID != "20260103-020202-yyyy" {
		t.Errorf("after the poll: stale %v, %d entries", hs.m.stale, len(got))
	}
}
