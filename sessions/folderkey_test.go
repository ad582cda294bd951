package sessions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestFolderKey: the key holds while the session's files do, and changes
// when a journal grows, a pid file is written or session.json changes.
func TestFolderKey(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	appendEv := func(ev profile.Event) {
		t.Helper()
		jw, err := OpenJournal(s.JournalPath("a"))
		if err != nil {
			t.Fatal(err)
		}
		if err := jw.WriteEvents([]profile.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if err := jw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	appendEv(profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "a", Session: s.ID()})
	key := func() string {
		t.Helper()
		k, err := st.FolderKey(s.ID())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if k := key(); k != k0 {
		t.Fatalf("the key changed without a write: %s, %s", k0, k)
	}
	appendEv(profile.Event{T: profile.TypeMetric, Name: "loss", Value: 1})
	k1 := key()
	if k1 == k0 {
		t.Error("a journal grew and the key held")
	}
	if err := os.WriteFile(s.RunsDir()+"/a.pid", []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k2 := key()
	if k2 == k1 {
		t.Error("a pid file was written and the key held")
	}
	s.Meta.Name = "renamed"
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if key() == k2 {
		t.Error("session.json changed and the key held")
	}
	// the same files in a store copied elsewhere (cp -a keeps the times)
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(other.SessionsDir(), os.DirFS(st.SessionsDir())); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(other.SessionsDir(), s.ID())
	for _, p := range []string{"session.json", "runs", "runs/a.jsonl", "runs/a.pid", ""} {
		fi, err := os.Stat(filepath.Join(s.Dir(), p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(copied, p), fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(copied, p), fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if k, err := other.FolderKey(s.ID()); err != nil || k == key() {
		t.Errorf("a copy of the store elsewhere has the same key (%v)", err)
	}
	if _, err := st.FolderKey("../x"); err == nil {
		t.Error("a name out of the store has a key")
	}
}
