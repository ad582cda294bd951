package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// rankCommand makes the test binary act as one rank of a command whose
// ranks stream to a collector (TestMain): `collector-rank R`.
const rankCommand = "collector-rank"

// actAsRank streams rank r's events (run_start, 5 spans, and run_end on
// rank 0) to the collector its environment names, as a client would:
// hello, clock exchanges and report, events, bye; 0 when the bye's
// count is right.
func actAsRank(arg string) int {
	r, _ := strconv.Atoi(arg)
	if err := streamRank(r); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", r, err)
		return 1
	}
	return 0
}

func streamRank(r int) error {
	nc, err := net.DialTimeout("tcp", os.Getenv(EnvCollector), 20*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	in := bufio.NewReader(nc)
	say := func(v any) map[string]int64 {
		b, _ := json.Marshal(v)
		nc.Write(append(b, '\n'))
		line, _ := in.ReadBytes('\n')
		var m map[string]int64
		json.Unmarshal(line, &m)
		return m
	}
	hello := map[string]any{"hello": 1, "token": os.Getenv(EnvCollectorToken), "run": os.Getenv(EnvRun), "rank": r, "world": 2, "node": "n" + strconv.Itoa(r)}
	if m := say(hello); m["welcome"] != 1 {
		return fmt.Errorf("no welcome: %v", m)
	}
	t1 := time.Now().UnixNano()
	m := say(map[string]int64{"sync": t1})
	t4 := time.Now().UnixNano()
	clock := map[string]int64{"ts": 0, "offset": (m["t2"] - t1 + m["t3"] - t4) / 2, "delay": t4 - t1 - (m["t3"] - m["t2"]), "samples": 1}
	evs := []profile.Event{{T: profile.TypeRunStart, V: 1, Run: os.Getenv(EnvRun), Rank: r, World: 2, Wall: time.Now().UTC().Format(time.RFC3339Nano)}}
	for i := 0; i < 5; i++ {
		evs = append(evs, profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Batch: i, Start: int64(i) * 100, Dur: 50})
	}
	if r == 0 {
		evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
	}
	var b []byte
	b, _ = json.Marshal(map[string]any{"clock": clock})
	b = append(b, '\n')
	for i := range evs {
		b = append(b, `{"seq":`+strconv.Itoa(i)+`,"ev":`...)
		b = append(append(profile.AppendEvent(b, &evs[i]), '}'), '\n')
	}
	nc.Write(b)
	if m := say(map[string]int{"bye": len(evs)}); m["bye"] != int64(len(evs)) {
		return fmt.Errorf("bye %v, sent %d", m, len(evs))
	}
	return nil
}

// TestExternalCollector: a run with a collector gives its command the
// collector's address and token; the command's two ranks stream their
// journals through it, each moved onto the collector's clock, and the
// run ends with the run_end rank 0 sent.
func TestExternalCollector(t *testing.T) {
	_, s := newSession(t, "collect")
	self := strconv.Quote(os.Args[0])
	script := fmt.Sprintf("%s %s 0 & %s %s 1 & wait", self, rankCommand, self, rankCommand)
	ext := &External{Cmd: "sh -c ...", Argv: []string{"sh", "-c", script}, Listen: "127.0.0.1:0"}
	v := Resolved{Variant: Variant{Name: "ddp", External: ext}}
	var log strings.Builder
	status, err := runExternal(context.Background(), s, "ddp", v, &log)
	if err != nil || status != profile.StatusOK {
		t.Fatalf("run: %s, %v\n%s", status, err, log.String())
	}
	for r, want := range []int{7, 6} {
		evs, st, err := readJournalFile(s.RankJournalPath("ddp", r))
		if err != nil || st != 0 {
			t.Fatalf("rank %d: %v, %d malformed", r, err, st)
		}
		if len(evs) != want || evs[0].T != profile.TypeRunStart || evs[0].Clock == nil || evs[0].WallLocal == "" || evs[0].Node != "n"+strconv.Itoa(r) {
			t.Errorf("rank %d: %d events (want %d), first %+v", r, len(evs), want, evs[0])
		}
	}
	if !strings.Contains(log.String(), "collector stopped: 2 rank(s) connected, 2 said bye") {
		t.Errorf("log:\n%s", log.String())
	}
}

// readJournalFile reads a journal: its events but clock events, and the
// count of malformed lines.
func readJournalFile(path string) ([]profile.Event, int, error) {
	all, st, err := sessions.ReadJournal(path)
	var out []profile.Event
	for _, e := range all {
		if e.T != profile.TypeClock {
			out = append(out, e)
		}
	}
	return out, st.Malformed, err
}

// TestExternalCollectorPortInUse: a listen address in use fails the run,
// naming it, before the command starts.
func TestExternalCollectorPortInUse(t *testing.T) {
	_, s := newSession(t, "busy")
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	marker := t.TempDir() + "/ran"
	ext := &External{Cmd: "touch", Argv: []string{"touch", marker}, Listen: ln.Addr().String()}
	v := Resolved{Variant: Variant{Name: "busy", External: ext}}
	status, err := runExternal(context.Background(), s, "busy", v, &strings.Builder{})
	if status != profile.StatusFailed || err == nil || !strings.Contains(err.Error(), ln.Addr().String()+" is already in use") {
		t.Errorf("run on a taken port: %s, %v", status, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}
