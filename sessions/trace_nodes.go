package sessions

import (
	"strconv"

	"github.com/gnnscope/gnnscope/profile"
)

// In the trace of a distributed run whose ranks name their nodes, each
// node is one process ("RUN node N HOST") and each of its ranks' lanes a
// thread of it (profile.RankLane: "rank3/compute"), the ranks placed
// within the node by their wall-clock starts; ranks that name no node
// keep a process of their own ("RUN rank R").

// traceNodes are the node processes of one run's trace.
type traceNodes struct {
	byRank map[int]*rankPart
	nodes  []*traceProc
}

// rankPart is one rank's part of its node's process.
type rankPart struct {
	proc  *traceProc
	rank  int
	shift int64 // the rank's wall-clock start after its node's, in ns
	lanes map[string]string
}

// newTraceNodes adds a process to tr for each node the ranks name.
func newTraceNodes(tr *profile.Trace, ref RunRef, refIdx int, starts []RankStart) traceNodes {
	n := traceNodes{byRank: map[int]*rankPart{}}
	type nodeKey struct {
		rank int
		name string
	}
	procs := map[nodeKey]*traceProc{}
	for _, s := range starts {
		if !s.HasNode {
			continue
		}
		k := nodeKey{s.NodeRank, s.Node}
		p := procs[k]
		if p == nil {
			name := ref.Run + " node " + strconv.Itoa(s.NodeRank)
			if s.Node != "" {
				name += " " + s.Node
			}
			p = &traceProc{run: tr.NewRun(name, "", ref.Session.ID()), ref: refIdx}
			procs[k] = p
			n.nodes = append(n.nodes, p)
		}
		if !s.Wall.IsZero() && (p.wall.IsZero() || s.Wall.Before(p.wall)) {
			p.wall = s.Wall
		}
		n.byRank[s.Rank] = &rankPart{proc: p, rank: s.Rank}
	}
	for _, s := range starts {
		if k := n.byRank[s.Rank]; k != nil && !s.Wall.IsZero() {
			k.shift = s.Wall.Sub(k.proc.wall).Nanoseconds()
		}
	}
	return n
}

// part returns the node process of rank and the rank's part of it; nil
// for a rank without a node.
func (n traceNodes) part(rank int) (*traceProc, *rankPart) {
	k := n.byRank[rank]
	if k == nil {
		return nil, nil
	}
	return k.proc, k
}

// procs returns the node processes.
func (n traceNodes) procs() []traceProc {
	out := make([]traceProc, len(n.nodes))
	for i, p := range n.nodes {
		out[i] = *p
	}
	return out
}

// rewrite names a span's lane after the rank and moves the rank's times
// onto its node's clock.
func (k *rankPart) rewrite(e *profile.Event) {
	switch e.T {
	case profile.TypeSpan:
		e.Lane, e.Start = rankLane(&k.lanes, k.rank, e.Lane), e.Start+k.shift
	case profile.TypeGPU:
		e.Ts += k.shift
	}
}
