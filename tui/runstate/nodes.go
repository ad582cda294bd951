package runstate

import (
	"cmp"
	"slices"

	"github.com/gnnscope/gnnscope/sessions"
)

// NodeGroup is the ranks of a distributed run that ran on one machine,
// as their run_starts say (sessions.RankStart).
type NodeGroup struct {
	// Known is false for the group of the ranks whose run_start names no
	// node; NodeRank and Node are then zero.
	Known    bool
	NodeRank int
	Node     string // the machine's host name
	Ranks    []int  // ascending
}

// SetRankStarts records what the run's ranks' run_starts say of them and
// groups the ranks by node (Nodes); it reports whether anything changed.
func (r *Run) SetRankStarts(starts []sessions.RankStart) bool {
	if slices.Equal(starts, r.RankStarts) {
		return false
	}
	r.RankStarts = slices.Clone(starts)
	r.Nodes = GroupNodes(starts)
	r.version++
	return true
}

// GroupNodes groups ranks by node: the nodes by node rank (then host
// name), each with its ranks ascending; the ranks without node
// information last, in one group. A rank listed twice counts once, in
// its first place.
func GroupNodes(starts []sessions.RankStart) []NodeGroup {
	var out []NodeGroup
	seen := map[int]bool{}
	for _, s := range starts {
		if seen[s.Rank] {
			continue
		}
		seen[s.Rank] = true
		i := slices.IndexFunc(out, func(g NodeGroup) bool {
			return g.Known == s.HasNode && (!g.Known || g.NodeRank == s.NodeRank && g.Node == s.Node)
		})
		if i < 0 {
			out = append(out, NodeGroup{Known: s.HasNode})
			i = len(out) - 1
			if s.HasNode {
				out[i].NodeRank, out[i].Node = s.NodeRank, s.Node
			}
		}
		out[i].Ranks = append(out[i].Ranks, s.Rank)
	}
	for i := range out {
		slices.Sort(out[i].Ranks)
	}
	slices.SortStableFunc(out, func(a, b NodeGroup) int {
		if a.Known != b.Known {
			if a.Known {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.NodeRank, b.NodeRank), cmp.Compare(a.Node, b.Node))
	})
	return out
}

// SetRankStarts records run i's ranks' run_starts (Run.SetRankStarts)
// under the lock.
func (s *Set) SetRankStarts(i int, starts []sessions.RankStart) {
	s.mu.Lock()
	changed := i >= 0 && i < len(s.runs) && s.runs[i].SetRankStarts(starts)
	s.mu.Unlock()
	if changed {
		s.version.Add(1)
	}
}

// rankStarter is a source that tells its ranks' run_starts
// (sessions.Live).
type rankStarter interface {
	RankStarts() []sessions.RankStart
}

// takeRankStarts records a source's rank run_starts when it has read
// more of them than n; it returns how many it has.
func (s *Set) takeRankStarts(i int, src sessions.Source, n int) int {
	rs, ok := src.(rankStarter)
	if !ok {
		return n
	}
	starts := rs.RankStarts()
	if len(starts) > n {
		s.SetRankStarts(i, starts)
	}
	return len(starts)
}
