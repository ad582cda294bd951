package sessions

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 37, point 5: a session appears in the store only once its
// session.json (and what prepare writes) exists; a failed creation leaves
// nothing.
func TestCreateIsAtomic(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var seen []SessionInfo
	var lastErr error
	s, err := st.CreateWith(SessionMeta{Name: "x"}, func(s *Session) error {
		seen, _ = st.List()
		_, lastErr = st.MatchSession("last")
		return os.WriteFile(filepath.Join(s.Dir(), "launch.json"), []byte("{}"), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 || !errors.Is(lastErr, ErrNoMatch) {
		t.Errorf("during creation: listed %+v, last: %v", seen, lastErr)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "launch.json")); err != nil || filepath.Base(s.Dir()) != s.ID() {
		t.Errorf("after creation: %s, %v", s.Dir(), err)
	}
	boom := errors.New("boom")
	if _, err := st.CreateWith(SessionMeta{Name: "y"}, func(*Session) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("failed prepare: %v", err)
	}
	if ents, _ := os.ReadDir(st.SessionsDir()); len(ents) != 1 {
		t.Errorf("a failed creation left %v", ents)
	}
}

// Issue 37, point 5: what interrupted launches and removals leave is
// listed as broken with its reason, does not take over "last", and goes
// with Delete by its name.
func TestBrokenFoldersListedAndRemovable(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, err := st.Create(SessionMeta{Name: "good", Created: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	noMeta := NewID(time.Now())
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{noMeta, ".new-" + noMeta + "-0001", ".rm-" + noMeta + "-0002", ".new-fresh"} {
		dir := filepath.Join(st.SessionsDir(), name)
		if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o700); err != nil {
			t.Fatal(err)
		}
		if name != ".new-fresh" {
			os.Chtimes(dir, old, old)
		}
	}
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	broken := map[string]string{}
	for _, in := range infos {
		if in.Broken != "" {
			broken[in.ID] = in.Broken
		}
	}
	if len(broken) != 3 || broken[".new-fresh"] != "" || !strings.Contains(broken[noMeta], "session.json") {
		t.Errorf("broken: %v", broken)
	}
	if s, err := st.MatchSession("last"); err != nil || s.ID() != good.ID() {
		t.Errorf("last with a newer broken folder: %v, %v", s, err)
	}
	for name := range broken {
		if err := st.Delete(name); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	}
	if err := st.Delete(".new-fresh"); err == nil {
		t.Error("a creation under way was deleted")
	}
	ents, _ := os.ReadDir(st.SessionsDir())
	if len(ents) != 2 {
		t.Errorf("left: %v", ents)
	}
	// a session's removal leaves no folder behind, hidden or not
	if err := st.Delete(good.ID()); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(st.SessionsDir()); len(ents) != 1 || ents[0].Name() != ".new-fresh" {
		t.Errorf("after delete: %v", ents)
	}
}

// Issue 37, point 12: "last" is the session created last, never a folder
// named "last" or an imported session with an odd id; an import of such
// an id gets a new one.
func TestLastIsNeverAName(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newest, err := st.Create(SessionMeta{Name: "newest"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"last", "zzz"} {
		if _, err := st.Create(SessionMeta{ID: id, Created: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{"last", "latest"} {
		if s, err := st.MatchSession(ref); err != nil || s.ID() != newest.ID() {
			t.Errorf("%s: %v, %v; want %s", ref, s, err, newest.ID())
		}
	}
	if _, err := st.MatchSession("zzz"); !errors.Is(err, ErrNoMatch) {
		t.Errorf("zzz: %v", err)
	}

	// an archive of session "zzz" imports under an id of the store's form
	var arc bytes.Buffer
	odd, _ := st.Get("zzz")
	if _, err := odd.Export(&arc, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, rep, err := other.Import(&arc, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RenamedFrom != "zzz" || CheckID(s.ID()) != nil || rep.ID != s.ID() {
		t.Errorf("imported as %s (report %+v)", s.ID(), rep)
	}
	if again, err := other.Get(s.ID()); err != nil || again.Meta.ID != s.ID() {
		t.Errorf("session.json after the rename: %+v, %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir(), metaFile)); !strings.Contains(string(b), s.ID()) {
		t.Errorf("session.json keeps the old id: %s", b)
	}
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{
		NewID(time.Now()): true, "20261122-153045-ab12": true, "20260102-090000-gggg": true,
		"last": false, "zzz": false, "20261122-153045-AB12": false, "20261122-153045-ab1": false,
		"20261122-153045-ab123": false, "2026112a-153045-ab12": false, "20261122_153045-ab12": false,
	} {
		if (CheckID(id) == nil) != ok {
			t.Errorf("CheckID(%q) = %v", id, CheckID(id))
		}
	}
}
