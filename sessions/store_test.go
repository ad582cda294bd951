package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

func TestDefaultRoot(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", "/x/gs")
	t.Setenv("XDG_DATA_HOME", "/x/data")
	if r, _ := DefaultRoot(); r != "/x/gs" {
		t.Errorf("GNNSCOPE_HOME: %s", r)
	}
	t.Setenv("GNNSCOPE_HOME", "")
	if r, _ := DefaultRoot(); r != filepath.Join("/x/data", "gnnscope") {
		t.Errorf("XDG_DATA_HOME: %s", r)
	}
	t.Setenv("XDG_DATA_HOME", "relative")
	t.Setenv("HOME", "/x/home")
	if r, _ := DefaultRoot(); r != filepath.Join("/x/home", ".local", "share", "gnnscope") {
		t.Errorf("home: %s", r)
	}
}

func newStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "root"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCreateGetList(t *testing.T) {
	st := newStore(t)
	if fi, err := os.Stat(filepath.Join(st.Root(), "sessions")); err != nil || !fi.IsDir() {
		t.Fatalf("sessions folder: %v", err)
	}
	created := time.Date(2025, 11, 22, 15, 30, 45, 0, time.UTC)
	a, err := st.Create(SessionMeta{Name: "cora sage", Created: created,
		Spec:     json.RawMessage(`{"dataset":"cora"}`),
		Variants: []Variant{{Name: "baseline"}, {Name: "optimized", Spec: json.RawMessage(`{"workers":4}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^20251122-153045-[0-9a-f]{4}$`).MatchString(a.ID()) {
		t.Errorf("id %q", a.ID())
	}
	if a.Meta.Host == nil || a.Meta.Host.Cores == 0 || a.Meta.Version != FormatVersion {
		t.Errorf("meta %+v", a.Meta)
	}
	if filepath.Dir(a.JournalPath("baseline")) != a.RunsDir() || !strings.HasSuffix(a.JournalPath("baseline"), "baseline.jsonl") {
		t.Errorf("journal path %s", a.JournalPath("baseline"))
	}
	// a second one the same second gets another id; a later one sorts after
	b, err := st.Create(SessionMeta{Created: created})
	if err != nil || b.ID() == a.ID() {
		t.Fatalf("second session: %v %s", err, b.ID())
	}
	c, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Name != "cora sage" || !got.Meta.Created.Equal(created) || compact(got.Meta.Variants[1].Spec) != `{"workers":4}` || got.Dir() != a.Dir() {
		t.Errorf("get: %+v", got.Meta)
	}
	if _, err := st.Get("../etc"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("get ../etc: %v", err)
	}
	if _, err := st.Get("20000101-000000-0000"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("get missing: %v", err)
	}
	if _, err := st.Create(SessionMeta{ID: a.ID()}); err == nil {
		t.Error("duplicate id accepted")
	}

	// a run in a, and a broken session folder
	w, err := a.OpenJournal("baseline")
	if err != nil {
		t.Fatal(err)
	}
	w.WriteEvents([]profile.Event{{T: profile.TypeRunStart, V: 1}, {T: profile.TypeRunEnd, Status: profile.StatusOK}})
	w.Close()
	os.Mkdir(filepath.Join(st.Root(), "sessions", "20270101-000000-dead"), 0o755)
	os.WriteFile(filepath.Join(st.Root(), "sessions", "notes.txt"), nil, 0o644)

	list, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 {
		t.Fatalf("list: %d entries: %+v", len(list), list)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].ID >= list[i].ID {
			t.Errorf("not sorted: %s, %s", list[i-1].ID, list[i].ID)
		}
	}
	var first SessionInfo
	for _, in := range list {
		if in.ID == a.ID() {
			first = in
		}
	}
	if len(first.Runs) != 1 || first.Runs[0].Run != "baseline" || first.Runs[0].Status != profile.StatusOK || first.Name != "cora sage" {
		t.Errorf("list entry %+v", first)
	}
	if list[3].ID != "20270101-000000-dead" || list[3].Err == "" {
		t.Errorf("broken session: %+v", list[3])
	}
	if list[2].ID != c.ID() {
		t.Errorf("order: %+v", list)
	}

	// delete
	if err := st.Delete(a.ID()); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete("20270101-000000-dead"); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.List(); len(list) != 2 {
		t.Errorf("after delete: %d", len(list))
	}
}

func compact(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return err.Error()
	}
	return out.String()
}

func TestDeleteRefusesRunning(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WritePid("r", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(s.ID()); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("delete of a running session: %v", err)
	}
}

func TestSaveUpdatesMeta(t *testing.T) {
	st := newStore(t)
	s, _ := st.Create(SessionMeta{Name: "a"})
	s.Meta.Variants = append(s.Meta.Variants, Variant{Name: "more"})
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(s.ID())
	if err != nil || len(got.Meta.Variants) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	ents, _ := os.ReadDir(s.Dir())
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestGetRefusesBadVariantNames: a session.json edited to name a variant
// outside the store is refused at load, naming the file and the name.
func TestGetRefusesBadVariantNames(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{Variants: []Variant{{Name: "baseline"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../../../../tmp/x", "", "a/b", ".."} {
		b, _ := json.Marshal(SessionMeta{Version: FormatVersion, ID: s.ID(), Variants: []Variant{{Name: "baseline"}, {Name: bad}}})
		if err := os.WriteFile(filepath.Join(s.Dir(), "session.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := st.Get(s.ID())
		want := fmt.Sprintf("session %s: session.json: variants[1]: variant name %q", s.ID(), bad)
		if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", bad, err, want)
		}
		list, err := st.List()
		if err != nil || len(list) != 1 || !strings.Contains(list[0].Err, "variant name") {
			t.Errorf("%q: list %+v %v", bad, list, err)
		}
	}
}

// TestOrderedRunsRepeats: a variant run with --repeats is listed by its
// repeats (NAME.r1 ...), not as a run of its own that never started; a
// variant without a journal or repeats still is.
func TestOrderedRunsRepeats(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{Variants: []Variant{{Name: "base"}, {Name: "opt"}, {Name: "later"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"base.r1", "opt.r1", "base.r2", "opt.r2", "opt.rx", "opt.r01"} {
		if err := os.WriteFile(s.JournalPath(run), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.OrderedRuns()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"later", "base.r1", "base.r2", "opt.r01", "opt.r1", "opt.r2", "opt.rx"}
	if !slices.Equal(got, want) {
		t.Errorf("OrderedRuns = %q, want %q", got, want)
	}
}
