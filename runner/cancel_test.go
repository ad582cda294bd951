package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/sessions"
)

// TestCancelNamesSessions: Cancel takes a session as every command names
// it (an id, a unique prefix, "last"); an unknown one cancels nothing.
func TestCancelNamesSessions(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 15, 30, 45, 0, time.UTC)
	older, err := st.Create(sessions.SessionMeta{ID: "20261122-153045-aaaa", Created: at})
	if err != nil {
		t.Fatal(err)
	}
	newer, err := st.Create(sessions.SessionMeta{ID: "20261123-091500-bbbb", Created: at.Add(18 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Cancel(st, "nosuch"); !errors.Is(err, sessions.ErrNoMatch) {
		t.Errorf("unknown session: %v", err)
	}
	if canceled(older) || canceled(newer) {
		t.Fatal("an unknown session canceled one")
	}
	rep, err := Cancel(st, "last")
	if err != nil || rep.Session != newer.ID() || !canceled(newer) || canceled(older) {
		t.Fatalf("last: %+v, %v", rep, err)
	}
	rep, err = Cancel(st, "20261122")
	if err != nil || rep.Session != older.ID() || !canceled(older) {
		t.Errorf("prefix: %+v, %v", rep, err)
	}
}
