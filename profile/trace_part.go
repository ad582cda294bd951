package profile

import "strings"

// Part starts another part of the run's process: the events added next
// are another journal's, such as another rank's of a node's process, at
// times from now on the process's clock. Its counters and instants are
// named with prefix ("rank 3 memory peak"), apart from the other parts'.
// The caller names its lanes apart too (RankLane).
func (r *TraceRun) Part(prefix string, now int64) {
	r.prefix, r.now = prefix, now
}

// laneOrder orders lanes: by rank (lanes without one first; RankLane),
// then within a rank by laneRank, then by name.
func laneOrder(a, b string) int {
	ka, la, oka := SplitRankLane(a)
	kb, lb, okb := SplitRankLane(b)
	if !oka {
		ka = -1
	}
	if !okb {
		kb = -1
	}
	if ka != kb {
		return ka - kb
	}
	ra, na := laneRank(la)
	rb, nb := laneRank(lb)
	if ra != rb {
		return ra - rb
	}
	if na != nb {
		return na - nb
	}
	return strings.Compare(a, b)
}
