package sessions

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// A run of four ranks, two on node 0, one on node 1 and one that names
// no node, makes three processes: one per node, its ranks' lanes its
// threads, each rank at its wall-clock start within its node; and the
// rank without a node one of its own.
func TestTraceProcessPerNode(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	const ms = int64(1e6)
	walls := []string{"2026-11-25T10:00:00Z", "2026-11-25T10:00:00.004Z", "2026-11-25T10:00:00.001Z", "2026-11-25T10:00:00.002Z"}
	nodes := []string{"gpu-a", "gpu-a", "gpu-b", ""}
	for rank := range 4 {
		start := profile.Event{T: profile.TypeRunStart, V: 1, Run: "ddp", Rank: rank, World: 4, Wall: walls[rank], Node: nodes[rank]}
		if nodes[rank] == "gpu-b" {
			start.NodeRank = 1
		}
		evs := []profile.Event{start,
			{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Start: 10 * ms, Dur: 5 * ms},
			{T: profile.TypeMem, Epoch: 1, Phase: profile.PhaseTrain, Peak: 100},
			{T: profile.TypeRunEnd, Status: profile.StatusOK}}
		writeJournal(t, s.RankJournalPath("ddp", rank), evs)
	}
	tr, ts, err := BuildTrace([]RunRef{{Session: s, Run: "ddp"}}, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Spans != 4 || ts.Runs != 1 {
		t.Errorf("stats %+v", ts)
	}
	var buf bytes.Buffer
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name string
			Pid, Tid int
			Ts       float64
			Args     map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	procs, threads := map[int]string{}, map[int]string{}
	first := map[string]float64{} // thread name -> its first slice
	counters := map[string]bool{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.Pid], _ = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			threads[e.Tid], _ = e.Args["name"].(string)
		case e.Ph == "C":
			counters[e.Name] = true
		}
	}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			key := procs[e.Pid] + ": " + threads[e.Tid]
			if f, ok := first[key]; !ok || e.Ts < f {
				first[key] = e.Ts
			}
		}
	}
	want := map[string]float64{
		"ddp node 0 gpu-a (session " + s.ID() + "): rank0/compute": 10000,
		"ddp node 0 gpu-a (session " + s.ID() + "): rank1/compute": 14000,
		"ddp node 1 gpu-b (session " + s.ID() + "): rank2/compute": 11000,
		"ddp rank 3 (session " + s.ID() + "): compute":             12000,
	}
	for k, v := range want {
		if got, ok := first[k]; !ok || got != v {
			t.Errorf("%s: first slice at %v us (present %v), want %v; have %v", k, got, ok, v, first)
		}
	}
	if len(procs) != 3 {
		t.Errorf("processes %v", procs)
	}
	if !counters["rank 1 memory peak"] || !counters["rank 0 memory peak"] {
		t.Errorf("counters %v: each rank's apart", counters)
	}
}
