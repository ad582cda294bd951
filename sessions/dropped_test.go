package sessions

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestEventsAfterRunEndDropped: the repro of a process a run left behind
// writing to its journal after run_end: the run stays ok, the late
// events counted as dropped, not crashed.
func TestEventsAfterRunEndDropped(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	ev := sampleEvents()
	appendRaw(t, s.JournalPath("a"), line(ev[0])+line(ev[1])+line(profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK}))
	late := profile.Event{T: profile.TypeMetric, Name: "loss", Value: 1}
	appendRaw(t, s.JournalPath("a"), line(late)+line(late)+"{torn")
	rs, err := s.RunState("a")
	if err != nil || rs.Status != profile.StatusOK || rs.Dropped != 2 {
		t.Errorf("run state %+v, %v", rs, err)
	}
}
