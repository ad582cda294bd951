package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestNewerSchemaRefused: a journal whose run_start declares a newer
// schema version is refused by every reader with an error naming the
// version, the version read and the journal; the current one is read.
func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	newer := profile.SchemaVersion + 1
	write := func(name string, v int) string {
		p := filepath.Join(dir, name)
		text := fmt.Sprintf(`{"t":"run_start","v":%d,"run":"a"}`+"\n"+`{"t":"run_end","status":"ok"}`+"\n", v)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	future := write("future.jsonl", newer)
	current := write("current.jsonl", profile.SchemaVersion)
	check := func(what string, err error) {
		t.Helper()
		want := fmt.Sprintf("written by schema version %d; this gnnscope reads up to %d: upgrade", newer, profile.SchemaVersion)
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), future) {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, _, err := ReadJournal(future)
	check("ReadJournal", err)
	_, err = SummarizeJournal(future)
	check("SummarizeJournal", err)
	_, err = NewTailer(future, TailOptions{}).Poll()
	check("tail", err)
	f, err := os.Open(future)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ScanJournal(f, func(*profile.Event) error { return nil }); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("ScanJournal: %v", err)
	}
	// The state of a run comes from the journal's last event, but not for
	// a journal of a newer schema: its run_end cannot be trusted either.
	_, _, err = lastEvent(future)
	check("lastEvent", err)
	if e, _, err := lastEvent(current); err != nil || e == nil || e.T != profile.TypeRunEnd {
		t.Errorf("last event of the current schema: %v, %v", e, err)
	}
	if evs, _, err := ReadJournal(current); err != nil || len(evs) != 2 {
		t.Errorf("current schema: %d events, %v", len(evs), err)
	}
	if evs, err := NewTailer(current, TailOptions{}).Poll(); err != nil || len(evs) != 2 {
		t.Errorf("tail of the current schema: %d events, %v", len(evs), err)
	}
}
