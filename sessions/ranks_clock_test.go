package sessions

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// Rank 1 of a two-node run as a collector writes it: the node's clock is
// 250 ms ahead of the collector's, so the rank's own wall (wall_local)
// reads 10:00:00.255 for a start 5 ms after rank 0's; the collector moved
// wall by the measured offset (-250 ms) onto its clock.
const rank1Collected = `{"t":"run_start","v":1,"run":"ddp","session":"S","variant":"ddp","wall":"2026-11-25T10:00:00.005Z","rank":1,"world":2,"node":"gpu-b","node_rank":1,"wall_local":"2026-11-25T10:00:00.255Z","clock":{"offset":-250000000,"delay":80000,"samples":8}}
{"t":"clock","ts":1000000,"clock":{"offset":-250000000,"delay":80000,"samples":8}}
{"t":"span","name":"sample","lane":"sampler/0","epoch":1,"batch":0,"start":0,"dur":10000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":10000000,"dur":30000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":40000000,"dur":70000000}
{"t":"gpu","ts":20000000,"used":200,"total":1000,"util":0.7}
{"t":"clock","ts":30000000,"clock":{"offset":-249990000,"delay":60000,"samples":8}}
`

// TestCollectedRankAligned: a rank whose run_start wall a collector
// corrected lands on the aligned times, read whole and tailed, and its
// clock events come along on the merged clock.
func TestCollectedRankAligned(t *testing.T) {
	_, s := ddpSession(t)
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(rank1Collected), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, st, err := s.ReadRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	if st.Malformed != 0 || st.Events != 15 {
		t.Errorf("stats %+v", st)
	}
	checkCollected(t, evs)

	l, err := s.Live("ddp", TailOptions{Interval: time.Millisecond, Alive: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []profile.Event
	for {
		e, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	checkCollected(t, got)

	js, err := SummarizeJournal(s.RankJournalPath("ddp", 1))
	if err != nil || js.Read.Malformed != 0 || js.Start == nil || js.Start.Node != "gpu-b" || js.Start.Clock == nil {
		t.Errorf("summary of rank 1: %+v %v", js.Read, err)
	}
}

// checkCollected checks the merged events of ddp with rank1Collected:
// checkMerged's times, and the clock events 5 ms later than written.
func checkCollected(t *testing.T, evs []profile.Event) {
	t.Helper()
	var clocks []int64
	rest := evs[:0:0]
	for _, e := range evs {
		if e.T == profile.TypeClock {
			clocks = append(clocks, e.Ts)
			continue
		}
		rest = append(rest, e)
	}
	checkMerged(t, rest)
	if len(clocks) != 2 || clocks[0] != 6e6 || clocks[1] != 35e6 {
		t.Errorf("clock events at %v, want 6 ms and 35 ms", clocks)
	}
}
