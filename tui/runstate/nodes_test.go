package runstate

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// Ranks group by node, nodes by node rank; ranks that name no node form
// one group, last.
func TestGroupNodes(t *testing.T) {
	starts := []sessions.RankStart{
		{Rank: 0, Node: "a", NodeRank: 0, HasNode: true},
		{Rank: 3, Node: "b", NodeRank: 1, HasNode: true},
		{Rank: 5},
		{Rank: 2, Node: "b", NodeRank: 1, HasNode: true},
		{Rank: 1, Node: "a", NodeRank: 0, HasNode: true},
		{Rank: 4},
		{Rank: 3, Node: "c", NodeRank: 2, HasNode: true}, // listed twice: the first counts
	}
	got := GroupNodes(starts)
	if len(got) != 3 {
		t.Fatalf("%d groups: %+v", len(got), got)
	}
	want := []struct {
		known bool
		node  string
		ranks string
	}{{true, "a", "[0 1]"}, {true, "b", "[2 3]"}, {false, "", "[4 5]"}}
	for i, w := range want {
		g := got[i]
		if g.Known != w.known || g.Node != w.node || fmtInts(g.Ranks) != w.ranks {
			t.Errorf("group %d: %+v, want %+v", i, g, w)
		}
	}
	r := NewRun("ddp")
	if !r.SetRankStarts(starts) || r.SetRankStarts(starts) {
		t.Error("SetRankStarts reports no change, or a change twice")
	}
	r.reset()
	if len(r.Nodes) != 3 {
		t.Error("a replay's restart forgets the nodes")
	}
}

func fmtInts(v []int) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += string(rune('0' + x))
	}
	return s + "]"
}

// rankSource is a source that tells its ranks' run_starts, as
// sessions.Live does: the second rank's once its events come.
type rankSource struct {
	evs    []profile.Event
	i      int
	starts []sessions.RankStart
}

func (s *rankSource) Next(ctx context.Context) (profile.Event, error) {
	if s.i >= len(s.evs) {
		return profile.Event{}, io.EOF
	}
	s.i++
	if s.i == 2 {
		s.starts = append(s.starts, sessions.RankStart{Rank: 1, Node: "b", NodeRank: 1, HasNode: true})
	}
	return s.evs[s.i-1], nil
}

func (s *rankSource) RankStarts() []sessions.RankStart { return s.starts }

// A live feed takes the ranks' run_starts as its source reads them.
func TestLiveFeedTakesRankStarts(t *testing.T) {
	src := &rankSource{
		evs: []profile.Event{
			{T: profile.TypeRunStart, Run: "ddp", World: 2},
			{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.RankLane(1, profile.LaneCompute), Dur: 5},
			{T: profile.TypeRunEnd, Status: profile.StatusOK},
		},
		starts: []sessions.RankStart{{Rank: 0, Node: "a", HasNode: true}},
	}
	set := NewSet([]string{"ddp"})
	if err := set.StartLive([]sessions.Source{src}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for set.Active() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	set.Close()
	r := set.Runs()[0]
	if len(r.Nodes) != 2 || r.Nodes[1].Node != "b" || len(r.RankStarts) != 2 {
		t.Errorf("nodes %+v", r.Nodes)
	}
}
