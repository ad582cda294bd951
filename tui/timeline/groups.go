package timeline

import (
	"strconv"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// A distributed run's lanes are grouped: under a header per node (the
// ranks' machines, runstate.Run.Nodes; only when some rank names its
// node) come its ranks, each with its lanes. A rank or a node folds to
// one summary row whose cells sum its lanes. What the user folded or
// unfolded stays so; the rest follows the space: everything open when
// the lanes fit, else the ranks folded, else the nodes.

// rowKind is what a row of the lane area stands for.
type rowKind uint8

const (
	rowLane rowKind = iota // one lane
	rowRank                // a folded rank: its lanes summed
	rowNode                // a node: its ranks summed when folded, a header when open
)

// row is one line of the lane area.
type row struct {
	kind  rowKind
	lane  uint16              // rowLane: the lane's id
	rank  int                 // the rank of a rowRank or a rank's rowLane; -1: none
	node  string              // the node's key (nodeKey) of a rowNode, or of a rank's rows
	open  bool                // rowNode: unfolded (a header without cells)
	lanes []uint16            // rowRank, rowNode: the lanes summed
	group *runstate.NodeGroup // rowNode: the node
	ranks int                 // rowNode: its ranks with lanes
}

// cells reports whether the row draws cells (an open node's header does
// not).
func (w *row) cells() bool { return !(w.kind == rowNode && w.open) }

// nodeKey names a node group in the fold choices.
func nodeKey(g *runstate.NodeGroup) string {
	if !g.Known {
		return "?"
	}
	return strconv.Itoa(g.NodeRank) + "/" + g.Node
}

// rankKey names a rank in the fold choices.
func rankKey(rank int) string { return "r" + strconv.Itoa(rank) }

// rankLanes is a rank's lanes, in display order.
type rankLanes struct {
	rank  int
	lanes []uint16
}

// layoutRows returns the rows of a run's lanes in display order, given
// the lines there are for them (avail) for the automatic folds.
func (m *Model) layoutRows(r *runstate.Run, avail int) []row {
	var out []row
	var ranks []rankLanes
	for _, id := range LaneOrder(&r.Lanes) {
		k, _, ok := profile.SplitRankLane(r.Lanes.Name(id))
		switch {
		case !ok:
			out = append(out, row{kind: rowLane, lane: id, rank: -1})
		case len(ranks) > 0 && ranks[len(ranks)-1].rank == k:
			ranks[len(ranks)-1].lanes = append(ranks[len(ranks)-1].lanes, id)
		default:
			ranks = append(ranks, rankLanes{rank: k, lanes: []uint16{id}})
		}
	}
	if len(ranks) == 0 {
		return out
	}
	groups := groupRanks(r.Nodes, ranks)
	headers := len(groups) > 1 || groups[0].g.Known
	// the automatic folds: 0 all open, 1 ranks folded, 2 nodes folded
	open, folded := len(out), len(out)
	for _, g := range groups {
		if headers {
			open++
			folded++
		}
		for _, k := range g.ranks {
			open += len(k.lanes)
			folded++
		}
	}
	level := 0
	switch {
	case open <= avail:
	case folded <= avail || !headers:
		level = 1
	default:
		level = 2
	}
	for _, g := range groups {
		nk := nodeKey(g.g)
		if headers {
			var all []uint16
			for _, k := range g.ranks {
				all = append(all, k.lanes...)
			}
			shut := m.folded(nk, level >= 2)
			out = append(out, row{kind: rowNode, rank: -1, node: nk, open: !shut, lanes: all, group: g.g, ranks: len(g.ranks)})
			if shut {
				continue
			}
		}
		for _, k := range g.ranks {
			if m.folded(rankKey(k.rank), level >= 1) {
				out = append(out, row{kind: rowRank, rank: k.rank, node: nk, lanes: k.lanes})
				continue
			}
			for _, id := range k.lanes {
				out = append(out, row{kind: rowLane, lane: id, rank: k.rank, node: nk})
			}
		}
	}
	return out
}

// folded reports whether the rank or node key is folded: as the user
// chose, else auto.
func (m *Model) folded(key string, auto bool) bool {
	if f, ok := m.folds[key]; ok {
		return f
	}
	return auto
}

// nodeRanks is a node group and its ranks that have lanes.
type nodeRanks struct {
	g     *runstate.NodeGroup
	ranks []rankLanes
}

// groupRanks places the ranks with lanes in their node groups (in the
// groups' order; ranks the groups do not name go with those without node
// information), dropping the groups without lanes.
func groupRanks(nodes []runstate.NodeGroup, ranks []rankLanes) []nodeRanks {
	at := map[int]int{} // rank -> group
	for gi := range nodes {
		for _, k := range nodes[gi].Ranks {
			at[k] = gi
		}
	}
	out := make([]nodeRanks, len(nodes))
	for gi := range nodes {
		out[gi].g = &nodes[gi]
	}
	var unknown *nodeRanks
	for _, k := range ranks {
		gi, ok := at[k.rank]
		if ok && nodes[gi].Known {
			out[gi].ranks = append(out[gi].ranks, k)
			continue
		}
		if unknown == nil {
			unknown = &nodeRanks{g: &runstate.NodeGroup{}}
		}
		unknown.ranks = append(unknown.ranks, k)
	}
	kept := out[:0]
	for _, g := range out {
		if len(g.ranks) > 0 && g.g.Known {
			kept = append(kept, g)
		}
	}
	if unknown != nil {
		kept = append(kept, *unknown)
	}
	return kept
}

// label is the row's label in the label column (an open node's header is
// written across the cells instead: headerText).
func (m *Model) label(r *runstate.Run, w *row) string {
	shut, _ := m.foldGlyphs()
	switch w.kind {
	case rowRank:
		return shut + "r" + strconv.Itoa(w.rank)
	case rowNode:
		if !w.group.Known {
			return shut + "no node"
		}
		return shut + "n" + strconv.Itoa(w.group.NodeRank) + " " + w.group.Node
	}
	return LaneLabel(r.Lanes.Name(w.lane))
}

// headerText is an open node's header line: the node, its host name and
// its ranks.
func (m *Model) headerText(w *row, ranks int) string {
	_, open := m.foldGlyphs()
	g := w.group
	s := open + " no node information"
	if g.Known {
		s = open + " node " + strconv.Itoa(g.NodeRank)
		if g.Node != "" {
			s += "  " + g.Node
		}
	}
	if ranks == 1 {
		return s + "  1 rank"
	}
	return s + "  " + strconv.Itoa(ranks) + " ranks"
}

// foldGlyphs are the marks of a folded and an open group.
func (m *Model) foldGlyphs() (shut, open string) {
	if m.ascii {
		return "+", "-"
	}
	return "▸", "▾"
}

// Fold folds or unfolds the group at the cursor's row: its rank (a
// rank's lane or folded rank), or with node its node (also from an open
// node's header, which folds it). It reports whether anything changed.
func (m *Model) Fold(node bool) bool {
	g := m.geo
	if m.bars || m.lane < 0 || m.lane >= len(g.all) {
		return false
	}
	w := g.all[m.lane]
	if m.folds == nil {
		m.folds = map[string]bool{}
	}
	switch {
	case w.kind == rowNode:
		m.folds[w.node] = w.open
		m.focus = "n" + w.node
	case node && w.node != "" && w.rank >= 0:
		m.folds[w.node] = true
		m.focus = "n" + w.node
	case w.kind == rowRank:
		m.folds[rankKey(w.rank)] = false
		m.focus = rankKey(w.rank)
	case w.kind == rowLane && w.rank >= 0:
		m.folds[rankKey(w.rank)] = true
		m.focus = rankKey(w.rank)
	default:
		return false
	}
	m.changed()
	return true
}

// refocus puts the cursor on the row of the group last folded or
// unfolded (Fold), once the rows are laid out again.
func (m *Model) refocus(rows []row) {
	if m.focus == "" {
		return
	}
	for i := range rows {
		w := &rows[i]
		if (w.kind == rowNode && "n"+w.node == m.focus) || (w.kind != rowNode && w.rank >= 0 && rankKey(w.rank) == m.focus) {
			m.lane = i
			break
		}
	}
	m.focus = ""
}
