package explain

import (
	"encoding/json"
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
		"   0   0.072         0.024  bound by data loading (67 %",
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
