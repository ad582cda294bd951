package sessions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

func writeRun(t *testing.T, s *sessions.Session, run string, evs ...profile.Event) {
	t.Helper()
	jw, err := sessions.OpenJournal(s.JournalPath(run))
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.WriteEvents(evs); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
}

func listed(t *testing.T, st *sessions.Store) Entry {
	t.Helper()
	infos, err := st.Folders()
	if err != nil || len(infos) != 1 {
		t.Fatalf("list: %v, %v", infos, err)
	}
	return describeCached(st, infos[0])
}

// TestListCache: a settled session's entry is read back from the cache
// while its journals stay as they were, and computed again once one
// changes.
func TestListCache(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	start := profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "a", Session: s.ID(), Wall: "2026-11-28T00:00:00Z"}
	writeRun(t, s, "a", start, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
	if e := listed(t, st); e.Status != profile.StatusOK {
		t.Fatalf("entry %+v", e)
	}
	path := filepath.Join(st.Root(), "listcache", s.ID()+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("nothing cached: %v", err)
	}
	var c cachedEntry
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c.Entry.Data = "marked in the cache"
	if b, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if e := listed(t, st); e.Data != "marked in the cache" {
		t.Errorf("the cache was not read: %+v", e)
	}
	// a journal that grows (events after run_end, dropped): computed
	// again, without the marked entry
	jw, err := sessions.OpenJournal(s.JournalPath("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.WriteEvents([]profile.Event{{T: profile.TypeMetric, Name: "loss", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	if e := listed(t, st); e.Data == "marked in the cache" {
		t.Errorf("a grown journal's session came from the cache: %+v", e)
	}
	mark(t, path, "marked again")
	if e := listed(t, st); e.Data != "marked again" {
		t.Errorf("the entry was not cached again: %+v", e)
	}
	// a run added: computed again
	writeRun(t, s, "b", start, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusFailed})
	if e := listed(t, st); e.Data == "marked again" || e.Status != profile.StatusFailed {
		t.Errorf("a stale entry was used: %+v", e)
	}
}

// TestListCacheSkipsUnsettled: a session whose runs may still change
// without their journals changing is never cached.
func TestListCacheSkipsUnsettled(t *testing.T) {
	for _, st := range []profile.Status{profile.StatusRunning, profile.StatusPending, profile.StatusUnknown} {
		info := sessions.SessionInfo{Runs: []sessions.RunState{{Run: "a", Status: profile.StatusOK}, {Run: "b", Status: st}}}
		if _, ok := entryKey(info); ok {
			t.Errorf("a session with a run %s has a cache key", st)
		}
	}
	if _, ok := entryKey(sessions.SessionInfo{Runs: []sessions.RunState{{Run: "a", Status: profile.StatusOK}}}); !ok {
		t.Error("a settled session has no cache key")
	}
}

// mark changes the data of the entry cached at path to data.
func mark(t *testing.T, path, data string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("nothing cached: %v", err)
	}
	var c cachedEntry
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	c.Entry.Data = data
	if b, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
