package runstate

import (
	"testing"

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
