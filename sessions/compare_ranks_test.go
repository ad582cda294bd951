package sessions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// A distributed run whose ranks name their nodes: the comparison counts
// the nodes, names the rank most often the slowest of a step, and
// carries a row per rank in JSON; CSV has the columns, Markdown the
// note.
func TestCompareRankNodes(t *testing.T) {
	st, s := ddpSession(t)
	for rank, text := range []string{rank0Journal, rank1Journal} {
		node := []string{`"node":"gpu-a",`, `"node":"gpu-b","node_rank":1,`}[rank]
		text = strings.Replace(text, `"t":"run_start",`, `"t":"run_start",`+node, 1)
		if err := os.WriteFile(s.RankJournalPath("ddp", rank), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := compareSession(t, st, s)
	ddp, single := runByName(t, c, "ddp"), runByName(t, c, "single")
	// epoch 1: a tie; epoch 2: rank 1 trains 70 ms against 40
	if ddp.Nodes != 2 || ddp.StepsCompared != 2 || ddp.SlowestRank != 1 || ddp.SlowestShare != 0.5 || len(ddp.RankRows) != 2 {
		t.Fatalf("ddp: %d nodes, slowest rank %d (%g of %d), rows %+v", ddp.Nodes, ddp.SlowestRank, ddp.SlowestShare, ddp.StepsCompared, ddp.RankRows)
	}
	if r := ddp.RankRows[1]; r.Rank != 1 || r.Node != "gpu-b" || r.NodeRank != 1 || r.SlowestSteps != 1 || r.TrainBusyS != 0.1 {
		t.Errorf("rank 1's row %+v", r)
	}
	if single.Nodes != 0 || single.RankRows != nil {
		t.Errorf("the run of one process has nodes %d, rows %v", single.Nodes, single.RankRows)
	}
	var md, js, cs bytes.Buffer
	for w, f := range map[*bytes.Buffer]string{&md: FormatMarkdown, &js: FormatJSON, &cs: FormatCSV} {
		if err := c.Write(w, f); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(md.String(), "ddp: 2 ranks on 2 nodes;") || !strings.Contains(md.String(), "rank 1 was the slowest of 50 % of 2 steps") {
		t.Errorf("markdown's note:\n%s", md.String())
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	row := 1
	if recs[1][slices.Index(recs[0], "run")] != "ddp" {
		row = 2
	}
	if n, k := slices.Index(recs[0], "node_count"), slices.Index(recs[0], "slowest_rank"); n < 0 || k < 0 || recs[row][n] != "2" || recs[row][k] != "1" {
		t.Errorf("csv columns: %v", recs)
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range back.Runs {
		if r.Run == "ddp" && (len(r.RankRows) != 2 || r.RankRows[0].Node != "gpu-a") {
			t.Errorf("json rank rows %+v", r.RankRows)
		}
	}
}
