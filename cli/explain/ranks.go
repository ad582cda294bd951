package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/sessions"
)

// RankNode is where one rank of a distributed run ran, as its
// run_start says: its node, and the clock offset a collector measured
// for it with its uncertainty (half the round trip), in seconds.
type RankNode struct {
	Rank         int      `json:"rank"`
	Node         string   `json:"node,omitempty"`
	NodeRank     int      `json:"node_rank"`
	HasNode      bool     `json:"has_node"`
	ClockOffsetS *float64 `json:"clock_offset_s,omitempty"`
	ClockUncertS *float64 `json:"clock_uncertainty_s,omitempty"`
}

// RunRanks are the ranks of one distributed run.
type RunRanks struct {
	Run   string     `json:"run"`
	Ranks []RankNode `json:"ranks"`
}

// rankNodes reads where each rank of a distributed run ran; nil for a
// run of one process or when the journals do not tell.
func rankNodes(s *sessions.Session, run string) []RankNode {
	starts, err := s.RankStarts(run)
	if err != nil || len(starts) < 2 {
		return nil
	}
	out := make([]RankNode, 0, len(starts))
	for _, st := range starts {
		n := RankNode{Rank: st.Rank, Node: st.Node, NodeRank: st.NodeRank, HasNode: st.HasNode}
		if c := st.Clock; c != nil {
			off, unc := float64(c.Offset)/1e9, float64(c.Uncertainty())/1e9
			n.ClockOffsetS, n.ClockUncertS = &off, &unc
		}
		out = append(out, n)
	}
	return out
}

// nodesOf returns the ranks of run among d's (nil if none).
func (d *Document) nodesOf(run string) []RankNode {
	for _, r := range d.Ranks {
		if r.Run == run {
			return r.Ranks
		}
	}
	return nil
}

// rankTable is the ranks' table: each rank's ledger, and where known
// its node, how often it was the slowest rank of a step, its alignment
// residual and its clock's offset.
func rankTable(l *analysis.Ledger, steps *analysis.RankSteps, nodes []RankNode, external bool) *table {
	byRank := map[int]*RankNode{}
	hasNode, hasClock := false, false
	for i := range nodes {
		byRank[nodes[i].Rank] = &nodes[i]
		hasNode = hasNode || nodes[i].HasNode
		hasClock = hasClock || nodes[i].ClockOffsetS != nil
	}
	stepOf := map[int]*analysis.RankStep{}
	if steps != nil {
		for i := range steps.Ranks {
			stepOf[steps.Ranks[i].Rank] = &steps.Ranks[i]
		}
	}
	t := &table{header: []string{"rank"}, right: []bool{true}}
	col := func(name string, right bool) {
		t.header, t.right = append(t.header, name), append(t.right, right)
	}
	if hasNode {
		col("node", false)
	}
	col("wall s", true)
	col("train busy s", true)
	if steps != nil {
		col("slowest steps", true)
		col("residual ms", true)
	}
	if hasClock {
		col("clock offset ms", true)
	}
	col("verdict", false)
	for i := range l.Ranks {
		r := &l.Ranks[i]
		row := []string{fmt.Sprint(r.Rank)}
		n := byRank[r.Rank]
		if hasNode {
			row = append(row, nodeName(n))
		}
		row = append(row, secs(r.Whole.WallS), secs(r.Whole.Busy[analysis.Train]))
		if steps != nil {
			slow, res := "0", "-"
			if s := stepOf[r.Rank]; s != nil {
				slow = fmt.Sprintf("%d (%s)", s.Slowest, pct(s.Share))
				if s.AlignedSteps > 0 {
					res = fmt.Sprintf("%+.3f", s.ResidualS*1e3)
				}
			}
			row = append(row, slow, res)
		}
		if hasClock {
			c := "-"
			if n != nil && n.ClockOffsetS != nil {
				c = fmt.Sprintf("%+.3f ± %.3f", *n.ClockOffsetS*1e3, *n.ClockUncertS*1e3)
			}
			row = append(row, c)
		}
		t.add(append(row, analysis.VerdictOf(&r.Whole, external).Text)...)
	}
	return t
}

// nodeName names a rank's node: its node rank and host name.
func nodeName(n *RankNode) string {
	if n == nil || !n.HasNode {
		return "-"
	}
	if n.Node == "" {
		return fmt.Sprint(n.NodeRank)
	}
	return fmt.Sprintf("%d %s", n.NodeRank, n.Node)
}

// worstSteps is how many steps the text names where the slowest rank
// was furthest ahead of the median rank.
const worstSteps = 5

// slowestItems says which ranks were the slowest of the steps, and the
// steps where the slowest was furthest ahead of the median rank.
func (p *printer) slowestItems(steps *analysis.RankSteps) {
	if steps == nil {
		return
	}
	ranks := slices.Clone(steps.Ranks)
	slices.SortStableFunc(ranks, func(a, b analysis.RankStep) int { return cmp.Compare(b.Slowest, a.Slowest) })
	var parts []string
	for _, r := range ranks {
		if r.Slowest > 0 {
			parts = append(parts, fmt.Sprintf("rank %d in %d (%s)", r.Rank, r.Slowest, pct(r.Share)))
		}
	}
	p.item(fmt.Sprintf("slowest rank of each of %d steps (longest train span): %s", steps.Steps, strings.Join(parts, ", ")))
	worst := slices.Clone(steps.Slowest)
	slices.SortStableFunc(worst, func(a, b analysis.SlowStep) int {
		return cmp.Compare(b.TrainS-b.MedianS, a.TrainS-a.MedianS)
	})
	var ws []string
	for _, s := range worst[:min(worstSteps, len(worst))] {
		ws = append(ws, fmt.Sprintf("epoch %d batch %d rank %d %s s (median %s s)", s.Epoch, s.Batch, s.Rank, secs(s.TrainS), secs(s.MedianS)))
	}
	p.item("steps the slowest rank held up most: " + strings.Join(ws, "; "))
}
