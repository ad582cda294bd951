package explain

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// rankEvents is one rank of an external run (the Python client's spans):
// each batch waits load ms for the loader, then trains for train ms.
func rankEvents(rank int, load, train int64) []profile.Event {
	c := profile.LaneCompute
	st := profile.Event{T: profile.TypeRunStart, V: 1, Run: "torch", Variant: "torch", Rank: rank, World: 2,
		Config: json.RawMessage(`{"cmd":["python","train.py"],"external":true,"client":"python"}`),
		Host:   &profile.Host{Cores: 4}, Wall: "2026-11-22T15:30:45Z"}
	evs := []profile.Event{st}
	var at int64
	for ep := 1; ep <= 2; ep++ {
		for b := 0; b < 3; b++ {
			evs = append(evs, sp(profile.StageSample, c, ep, b, at, at+load))
			evs = append(evs, trainAt(c, ep, b, at+load, at+load+train)...)
			at += load + train
		}
	}
	return append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
}

// A distributed external run: the ranks' journals are merged, each rank
// gets its ledger, the slowest is the straggler, and the main process's
// wait for batches is exposed data loading.
func TestExplainExternalRanks(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{ID: "20261122-153045-cd34", Variants: []sessions.Variant{{Name: "torch"}}})
	if err != nil {
		t.Fatal(err)
	}
	for rank, evs := range [][]profile.Event{rankEvents(0, 8, 4), rankEvents(1, 8, 10)} {
		j, err := sessions.OpenJournal(s.RankJournalPath("torch", rank))
		if err != nil {
			t.Fatal(err)
		}
		if err := j.WriteEvents(evs); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	out := explainWith(t, st, ExplainOptions{Ref: "last"})
	for _, want := range []string{
		"verdict (setup left out): bound by training compute (56 % of wall time exposed; next: data loading 44 %)",
		"   0   0.072         0.024        0 (0 %)      -10.500  bound by data loading (67 %",
		"slowest rank of each of 6 steps (longest train span): rank 1 in 6 (100 %)",
		"sample (loading)",
		"straggler: rank 1, train busy 0.060 s against the median rank's 0.042 s: 17 % of wall time",
		"external-loader: data loading exposed 44 %",
		"try DataLoader(..., num_workers=4): not estimated",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "   1   0.108"); n != 1 {
		t.Errorf("rank 1's row: %d\n%s", n, out)
	}
}

// Ranks on two nodes, the second's clock measured by a collector: the
// ranks' table names each rank's node, its residual against the others'
// backward ends and its clock's offset; JSON carries them too.
func TestExplainRankNodesAndClock(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{ID: "20261122-153045-ef56", Variants: []sessions.Variant{{Name: "torch"}}})
	if err != nil {
		t.Fatal(err)
	}
	for rank, evs := range [][]profile.Event{rankEvents(0, 8, 4), rankEvents(1, 8, 10)} {
		evs[0].Node, evs[0].NodeRank = []string{"gpu-a", "gpu-b"}[rank], rank
		var lines []byte
		for i := range evs {
			lines = append(profile.AppendEvent(lines, &evs[i]), '\n')
		}
		if rank == 1 { // the collector's clock report, as it writes it
			lines = []byte(strings.Replace(string(lines), `"t":"run_start",`, `"t":"run_start","clock":{"ts":1,"offset":-250000000,"delay":400000,"samples":8},`, 1))
		}
		if err := os.WriteFile(s.RankJournalPath("torch", rank), lines, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := explainWith(t, st, ExplainOptions{Ref: "last"})
	for _, want := range []string{
		"rank  node     wall s  train busy s  slowest steps  residual ms   clock offset ms  verdict",
		"   0  0 gpu-a   0.072         0.024        0 (0 %)      -10.500                 -  bound by data loading",
		"   1  1 gpu-b   0.108         0.060      6 (100 %)      +10.500  -250.000 ± 0.200  bound by training compute",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	md := explainWith(t, st, ExplainOptions{Ref: "last", Format: FormatMarkdown})
	for _, want := range []string{"| rank | node | wall s | train busy s | slowest steps | residual ms | clock offset ms | verdict |",
		"| 1 | 1 gpu-b | 0.108 | 0.060 | 6 (100 %) | +10.500 | -250.000 ± 0.200 |", "- slowest rank of each of 6 steps"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the Markdown:\n%s", want, md)
		}
	}
	js := explainWith(t, st, ExplainOptions{Ref: "last", Format: FormatJSON})
	var doc struct {
		Ranks  []RunRanks `json:"rank_nodes"`
		Report struct {
			Runs []struct {
				RankSteps struct {
					Steps int `json:"steps"`
				} `json:"rank_steps"`
			} `json:"runs"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ranks) != 1 || len(doc.Ranks[0].Ranks) != 2 || doc.Ranks[0].Ranks[1].Node != "gpu-b" ||
		doc.Ranks[0].Ranks[1].ClockOffsetS == nil || *doc.Ranks[0].Ranks[1].ClockOffsetS != -0.25 {
		t.Errorf("JSON ranks %+v", doc.Ranks)
	}
	if len(doc.Report.Runs) != 1 || doc.Report.Runs[0].RankSteps.Steps != 6 {
		t.Errorf("JSON rank steps %+v", doc.Report.Runs)
	}
}
