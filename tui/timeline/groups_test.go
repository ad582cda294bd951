package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// nodesRun is a merged run of five ranks: ranks 0 and 1 on node 0
// ("gpu-a"), 2 and 3 on node 1 ("gpu-b"), rank 4 without node
// information; each rank samples on a worker lane and trains on its
// compute lane, the ranks of node 1 a little later.
func nodesRun() *runstate.Run {
	r := runstate.NewRun("ddp")
	r.Add(&profile.Event{T: profile.TypeRunStart, Run: "ddp", World: 5})
	const ms = int64(time.Millisecond)
	for b := range 3 {
		for k := range 5 {
			at := int64(b)*40*ms + int64(k/2)*3*ms
			span := func(name, lane string, start, dur int64) {
				r.Add(&profile.Event{T: profile.TypeSpan, Name: name, Lane: profile.RankLane(k, lane), Epoch: 1, Batch: b, Start: start, Dur: dur})
			}
			span(profile.StageSample, profile.SamplerLane(0), at, 10*ms)
			span(profile.StageTrain, profile.LaneCompute, at+10*ms, 25*ms)
			span(profile.StageForward, profile.LaneCompute, at+10*ms, 10*ms)
			span(profile.StageBackward, profile.LaneCompute, at+20*ms, 15*ms)
		}
	}
	r.SetRankStarts([]sessions.RankStart{
		{Rank: 0, Node: "gpu-a", HasNode: true}, {Rank: 1, Node: "gpu-a", HasNode: true},
		{Rank: 2, Node: "gpu-b", NodeRank: 1, HasNode: true}, {Rank: 3, Node: "gpu-b", NodeRank: 1, HasNode: true},
		{Rank: 4},
	})
	return r
}

// The lanes of each node come under its header, the ranks without node
// information under one of their own; where they fit, every group is
// open.
func TestGoldenNodeGroups(t *testing.T) {
	r := nodesRun()
	for _, c := range []struct {
		name string
		w, h int
	}{{"nodes_ascii_80x24", 80, 24}, {"nodes_ascii_160x48", 160, 48}} {
		m := newModel(common.Options{NoColor: true, ASCII: true})
		m.SetSize(c.w, c.h)
		v := m.View(r)
		golden.Check(t, c.name, v)
		for _, want := range []string{"- node 0  gpu-a  2 ranks", "- node 1  gpu-b  2 ranks", "- no node information  1 rank", "r4 smp/0"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d lacks %q", c.w, c.h, want)
			}
		}
	}
}

// Short of lines, the ranks fold to a row each; shorter still, the
// nodes. The user's folds stay: f on a rank's lane folds the rank, f on
// it again unfolds it, F folds its node, f on the node opens it.
func TestGoldenFolds(t *testing.T) {
	r := nodesRun()
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(80, 12)
	v := m.View(r)
	golden.Check(t, "folds_ranks_ascii", v)
	if !strings.Contains(v, "+r2") || strings.Contains(v, "r2 comp") {
		t.Errorf("the ranks are not folded in 12 lines:\n%s", v)
	}
	m.SetSize(80, 7)
	v = m.View(r)
	golden.Check(t, "folds_nodes_ascii", v)
	if !strings.Contains(v, "+n0 gpu-a") || strings.Contains(v, "+r0") {
		t.Errorf("the nodes are not folded in 7 lines:\n%s", v)
	}

	m = newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(80, 24)
	m.View(r)
	m.MoveLane(1) // node 0's header, then rank 0's compute lane
	if !m.Fold(false) || !strings.Contains(m.View(r), "+r0") {
		t.Fatal("f on a rank's lane did not fold the rank")
	}
	if m.geo.all[m.lane].kind != rowRank || m.geo.all[m.lane].rank != 0 {
		t.Errorf("the cursor is not on the folded rank: row %d", m.lane)
	}
	if !m.Fold(false) || strings.Contains(m.View(r), "+r0") {
		t.Error("f on a folded rank did not open it")
	}
	if !m.Fold(true) {
		t.Fatal("F on a rank's lane did nothing")
	}
	v = m.View(r)
	golden.Check(t, "folds_node0_ascii", v)
	if !strings.Contains(v, "+n0 gpu-a") || !strings.Contains(v, "- node 1") {
		t.Errorf("F did not fold node 0 alone:\n%s", v)
	}
	if !m.Fold(false) || strings.Contains(m.View(r), "+n0") {
		t.Error("f on a folded node did not open it")
	}
}

// The cursor reaches every row, the view scrolling to it; a summary
// row's details are its lanes' spans.
func TestGroupsScrollAndSelect(t *testing.T) {
	r := nodesRun()
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(80, 9)
	m.folds = map[string]bool{"r0": false, "r1": false, "r2": false, "r3": false, "r4": false, "0/gpu-a": false, "1/gpu-b": false, "?": false}
	m.View(r)
	n := len(m.geo.all)
	if n <= len(m.geo.rows) {
		t.Fatalf("%d rows fit in 9 lines: nothing to scroll", n)
	}
	for range n {
		m.MoveLane(1)
		m.View(r)
	}
	if m.lane != n-1 || m.top+len(m.geo.rows) != n {
		t.Errorf("cursor row %d of %d, top %d, %d shown", m.lane, n, m.top, len(m.geo.rows))
	}
	if !strings.Contains(m.View(r), "r4 eval") && !strings.Contains(m.View(r), "r4 smp/0") {
		t.Errorf("the last rows do not show:\n%s", m.View(r))
	}
	m.folds["r4"] = true
	m.focus = "r4"
	m.changed()
	m.View(r)
	if w := m.geo.all[m.lane]; w.kind != rowRank || w.rank != 4 {
		t.Fatalf("cursor on row %+v", w)
	}
	if !m.SelectAtCursor(r) {
		t.Fatal("nothing selected on a folded rank's row")
	}
	if lane, _, _ := profile.SplitRankLane(r.Lanes.Name(r.Spans.Lane[m.Selected()])); lane != 4 {
		t.Errorf("selected a span of rank %d", lane)
	}
}
