package sessions

import (
	"fmt"
	"strconv"

	"github.com/gnnscope/gnnscope/analysis"
)

// RankFigures is one rank of a distributed run in a comparison: its
// node, its busy train time, how many steps it was the slowest rank of
// and its alignment residual (analysis.RankSteps).
type RankFigures struct {
	Rank         int     `json:"rank"`
	Node         string  `json:"node,omitempty"`
	NodeRank     int     `json:"node_rank"`
	HasNode      bool    `json:"has_node"`
	TrainBusyS   float64 `json:"train_busy_s"`
	SlowestSteps int     `json:"slowest_steps"`
	ResidualS    float64 `json:"residual_s"`
	AlignedSteps int     `json:"aligned_steps"`
}

// rankFigures sets a distributed run's per-rank rows, the nodes its
// ranks ran on and the rank that was most often a step's slowest, from
// its analysis and its ranks' run_starts.
func (f *RunFigures) rankFigures(s *Session, run string, an *analysis.Run) {
	if an == nil || len(an.Ledger.Ranks) < 2 {
		return
	}
	starts, _ := s.RankStarts(run) // without them, no nodes
	at := map[int]RankStart{}
	nodes := map[[2]string]bool{}
	for _, st := range starts {
		at[st.Rank] = st
		if st.HasNode {
			nodes[[2]string{strconv.Itoa(st.NodeRank), st.Node}] = true
		}
	}
	steps := map[int]analysis.RankStep{}
	if rs := an.RankSteps; rs != nil {
		f.StepsCompared = rs.Steps
		for _, r := range rs.Ranks {
			steps[r.Rank] = r
			if r.Slowest > 0 && (f.SlowestShare == 0 || r.Share > f.SlowestShare) {
				f.SlowestRank, f.SlowestShare = r.Rank, r.Share
			}
		}
	}
	f.Nodes = len(nodes)
	for _, l := range an.Ledger.Ranks {
		st, sp := at[l.Rank], steps[l.Rank]
		f.RankRows = append(f.RankRows, RankFigures{Rank: l.Rank, Node: st.Node, NodeRank: st.NodeRank, HasNode: st.HasNode,
			TrainBusyS: finiteOr0(l.Whole.Busy[analysis.Train]), SlowestSteps: sp.Slowest,
			ResidualS: finiteOr0(sp.ResidualS), AlignedSteps: sp.AlignedSteps})
	}
}

// ranksNote is a comparison's note on a distributed run: its ranks and
// nodes, and the rank most often the slowest of a step.
func ranksNote(r *RunFigures) string {
	s := fmt.Sprintf("%s: %d ranks", r.Label, r.Ranks)
	if r.Nodes > 0 {
		s += fmt.Sprintf(" on %d nodes", r.Nodes)
	}
	s += "; epoch times of the slowest rank, straggler = slowest rank's training time over the median rank's"
	if r.SlowestShare > 0 {
		s += fmt.Sprintf("; rank %d was the slowest of %.0f %% of %d steps", r.SlowestRank, 100*r.SlowestShare, r.StepsCompared)
	}
	return s
}

// slowestCell is the rank most often a step's slowest, for CSV.
func slowestCell(r *RunFigures, _ bool) string {
	return optCell(r.SlowestShare > 0, strconv.Itoa(r.SlowestRank))
}
