package collector

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// rankEvents are n events of a rank: its run_start (wall-clock start
// wall) and spans.
func rankEvents(rank, n int, wall time.Time) []profile.Event {
	evs := []profile.Event{{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: testRun, Rank: rank, World: 2,
		Wall: wall.UTC().Format(time.RFC3339Nano)}}
	for i := 1; i < n; i++ {
		evs = append(evs, profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute,
			Epoch: 1, Batch: i, Start: int64(i) * 1000, Dur: 500 + int64(rank)})
	}
	return evs
}

// journal reads rank r's journal: its events other than clock ones, and
// its clock events.
func journal(t *testing.T, s *sessions.Session, r int) (evs, clocks []profile.Event) {
	t.Helper()
	all, st, err := sessions.ReadJournal(s.RankJournalPath(testRun, r))
	if err != nil || st.Malformed != 0 {
		t.Fatalf("rank %d's journal: %+v %v", r, st, err)
	}
	for _, e := range all {
		if e.T == profile.TypeClock {
			clocks = append(clocks, e)
		} else {
			evs = append(evs, e)
		}
	}
	return evs, clocks
}

// sameEvents fails unless got are sent, each once and in order, apart
// from what the collector adds to run_start.
func sameEvents(t *testing.T, r int, got, sent []profile.Event) {
	t.Helper()
	if len(got) != len(sent) {
		t.Fatalf("rank %d: journal has %d events, %d sent", r, len(got), len(sent))
	}
	for i := range got {
		g := got[i]
		if g.T == profile.TypeRunStart {
			if g.WallLocal != "" {
				g.Wall = g.WallLocal
			}
			g.WallLocal, g.Clock, g.Node, g.NodeRank = "", nil, "", 0
		}
		if a, b := profile.AppendEvent(nil, &g), profile.AppendEvent(nil, &sent[i]); string(a) != string(b) {
			t.Fatalf("rank %d: event %d is\n %s\nsent\n %s", r, i, a, b)
		}
	}
}

// stream sends a rank's whole life on one connection: hello, clock,
// events, bye.
func stream(t *testing.T, c *Collector, rank int, evs []profile.Event) {
	cl := dial(t, c)
	if next := cl.hello(c, rank, 2); next != 0 {
		t.Errorf("rank %d: first welcome's next %d", rank, next)
	}
	cl.report(cl.syncClock(8), 1)
	for i, e := range evs {
		cl.event(i, e)
	}
	if n := cl.bye(len(evs)); n != int64(len(evs)) {
		t.Errorf("rank %d: bye %d, sent %d", rank, n, len(evs))
	}
}

func TestTwoRanksStream(t *testing.T) {
	c, s, log := start(t)
	sent := [][]profile.Event{rankEvents(0, 500, time.Now()), rankEvents(1, 700, time.Now())}
	var wg sync.WaitGroup
	for r := range sent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream(t, c, r, sent[r])
		}()
	}
	wg.Wait()
	ends, err := c.Stop(DrainTime)
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) != 2 || !ends[0].Bye || !ends[1].Bye || ends[1].Events != 700 || ends[0].Node != "nodea" {
		t.Errorf("ends %+v", ends)
	}
	for r := range sent {
		got, clocks := journal(t, s, r)
		sameEvents(t, r, got, sent[r])
		if len(clocks) != 1 || clocks[0].Ts != 1 || clocks[0].Clock.Samples != 8 {
			t.Errorf("rank %d: clock events %+v", r, clocks)
		}
		if got[0].Node != fmt.Sprintf("node%c", 'a'+r) || got[0].NodeRank != r || got[0].Clock == nil {
			t.Errorf("rank %d: run_start %+v", r, got[0])
		}
	}
	// run_start stays the journal's first line, the clock report after it
	all, _, _ := sessions.ReadJournal(s.RankJournalPath(testRun, 1))
	if all[0].T != profile.TypeRunStart || all[1].T != profile.TypeClock {
		t.Errorf("journal starts %s, %s", all[0].T, all[1].T)
	}
	if !strings.Contains(log.String(), "collector: rank 1 (node nodeb) connected from 127.0.0.1:") {
		t.Errorf("log lacks rank 1's connection: %s", log)
	}
	if strings.Contains(log.String(), "did not say bye") {
		t.Errorf("log: %s", log)
	}
}

// TestResume: a connection dropped midway and one taken over while open
// lose nothing and double nothing, whatever the collector had read.
func TestResume(t *testing.T) {
	c, s, _ := start(t)
	sent := rankEvents(1, 300, time.Now())
	cl := dial(t, c)
	cl.hello(c, 1, 2)
	cl.report(cl.syncClock(2), 1)
	for i := 0; i < 100; i++ {
		cl.event(i, sent[i])
	}
	cl.nc.Close() // dropped

	cl2 := dial(t, c)
	next := cl2.hello(c, 1, 2)
	if next < 0 || next > 100 {
		t.Fatalf("next %d after 100 sent", next)
	}
	for i := max(0, int(next)-5); i < 200; i++ { // resent from a little before
		cl2.event(i, sent[i])
	}
	// a third connection takes over while the second is open
	cl3 := dial(t, c)
	next = cl3.hello(c, 1, 2)
	if next > 200 {
		t.Fatalf("next %d after 200 sent", next)
	}
	if _, err := cl2.r.ReadByte(); err == nil {
		t.Error("the replaced connection stays open")
	}
	for i := int(next); i < len(sent); i++ {
		cl3.event(i, sent[i])
	}
	if n := cl3.bye(len(sent)); n != int64(len(sent)) {
		t.Errorf("bye %d, sent %d", n, len(sent))
	}
	if _, err := c.Stop(DrainTime); err != nil {
		t.Fatal(err)
	}
	got, _ := journal(t, s, 1)
	sameEvents(t, 1, got, sent)
}

func TestRefusals(t *testing.T) {
	c, _, log := start(t)
	for _, tc := range []struct{ hello, reason string }{
		{`{"hello":1,"token":"00","run":"ddp","rank":0,"world":2}`, "wrong token"},
		{`{"hello":1,"run":"ddp","rank":0,"world":2}`, "no token"},
		{`{"hello":1,"token":"TOKEN","run":"other","rank":0,"world":2}`, `run "other" is not the run being collected`},
		{`{"hello":1,"token":"TOKEN","run":"ddp","rank":2,"world":2}`, "rank 2 outside 0 … 1"},
		{`{"hello":1,"token":"TOKEN","run":"ddp","rank":-1,"world":2}`, "rank -1 outside"},
		{`{"hello":1,"token":"TOKEN","run":"ddp","world":2}`, "hello without a rank"},
		{`{"hello":2,"token":"TOKEN","run":"ddp","rank":0}`, "hello version 2"},
		{`{"seq":0,"ev":{"t":"span"}}`, "the first line is not a hello"},
		{`not json`, "the first line is not a hello"},
	} {
		cl := dial(t, c)
		cl.send(strings.Replace(tc.hello, "TOKEN", c.Token(), 1))
		cl.refused(tc.reason)
		want := fmt.Sprintf("refused connection from %s: %s", cl.nc.LocalAddr(), tc.reason)
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestGapRefused(t *testing.T) {
	c, s, log := start(t)
	sent := rankEvents(0, 3, time.Now())
	cl := dial(t, c)
	cl.hello(c, 0, 2)
	cl.event(0, sent[0])
	cl.event(2, sent[2])
	cl.refused("gap: expected seq 1, got 2")
	if !strings.Contains(log.String(), "gap: expected seq 1, got 2") {
		t.Errorf("log: %s", log)
	}
	cl = dial(t, c)
	if next := cl.hello(c, 0, 2); next != 1 {
		t.Errorf("next %d after the gap, want 1", next)
	}
	cl.event(1, sent[1])
	cl.event(2, sent[2])
	cl.bye(3)
	c.Stop(DrainTime)
	got, _ := journal(t, s, 0)
	sameEvents(t, 0, got, sent)
}

func TestPortInUse(t *testing.T) {
	c, s, _ := start(t)
	addr := c.Addr().String()
	_, err := Start(Options{Addr: addr, Session: s, Run: testRun})
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), addr) {
		t.Errorf("second collector on %s: %v", addr, err)
	}
	if _, err := Start(Options{Addr: "127.0.0.1", Session: s, Run: testRun}); err == nil {
		t.Error("an address without a port listens")
	}
}

// TestClockCorrected: a rank whose clock is 250 ms ahead has its
// run_start moved onto the collector's clock by the offset it measured,
// which is within its uncertainty of the truth.
func TestClockCorrected(t *testing.T) {
	c, s, _ := start(t)
	cl := dial(t, c)
	cl.skew = 250 * time.Millisecond
	cl.hello(c, 1, 2)
	est := cl.syncClock(8)
	if d := est.Offset + int64(cl.skew); d > est.Delay/2+1 || d < -est.Delay/2-1 {
		t.Errorf("offset %d, delay %d: the true offset %d is outside the uncertainty", est.Offset, est.Delay, -int64(cl.skew))
	}
	cl.report(est, 5)
	local := cl.wall()
	sent := rankEvents(1, 3, local)
	for i, e := range sent {
		cl.event(i, e)
	}
	cl.bye(3)
	c.Stop(DrainTime)
	got, clocks := journal(t, s, 1)
	sameEvents(t, 1, got, sent)
	st := got[0]
	want := local.Add(time.Duration(est.Offset)).UTC().Format(time.RFC3339Nano)
	if st.Wall != want || st.WallLocal != sent[0].Wall || st.Clock == nil || *st.Clock != est {
		t.Errorf("run_start wall %s (want %s), wall_local %s (sent %s), clock %+v (reported %+v)", st.Wall, want, st.WallLocal, sent[0].Wall, st.Clock, est)
	}
	if len(clocks) != 1 || *clocks[0].Clock != est || clocks[0].Ts != 5 {
		t.Errorf("clock events %+v", clocks)
	}
}

func TestLineTooLong(t *testing.T) {
	c, _, log := start(t)
	cl := dial(t, c)
	cl.hello(c, 0, 1)
	go cl.nc.Write([]byte(strings.Repeat("x", MaxLine+1) + "\n")) // one byte too many, nothing after it
	cl.refused("line longer than 4 MiB")
	if !strings.Contains(log.String(), "line longer than 4 MiB") {
		t.Errorf("log: %s", log)
	}
}

// TestByeCounts: bye answers the collector's count, and Stop reports and
// logs a rank that never said bye.
func TestByeCounts(t *testing.T) {
	c, _, log := start(t)
	sent := rankEvents(0, 3, time.Now())
	cl := dial(t, c)
	cl.hello(c, 0, 2)
	for i, e := range sent {
		cl.event(i, e)
	}
	cl.event(1, sent[1]) // a resend, dropped
	if n := cl.bye(5); n != 3 {
		t.Errorf("bye 5 answered %d, want 3", n)
	}
	quiet := dial(t, c)
	quiet.hello(c, 1, 2)
	quiet.event(0, rankEvents(1, 1, time.Now())[0])
	ends, err := c.Stop(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) != 2 || !ends[0].Bye || ends[0].Events != 3 || ends[1].Bye {
		t.Errorf("ends %+v", ends)
	}
	if !strings.Contains(log.String(), "rank 1 (node nodeb) did not say bye") || strings.Contains(log.String(), "rank 0 (node nodea) did not") {
		t.Errorf("log: %s", log)
	}
	if _, err := quiet.r.ReadByte(); err == nil {
		t.Error("Stop left a connection open")
	}
}

func TestAdvertised(t *testing.T) {
	st, _ := sessions.Open(t.TempDir())
	s, _ := st.Create(sessions.SessionMeta{Name: "a"})
	c, err := Start(Options{Addr: "0.0.0.0:0", Session: s, Run: testRun})
	if err != nil {
		t.Skipf("no IPv4 wildcard here: %v", err)
	}
	defer c.Stop(0)
	got, err := c.Advertised()
	host, port, _ := net.SplitHostPort(got)
	_, want, _ := net.SplitHostPort(c.Addr().String())
	if err != nil || host == "" || host == "0.0.0.0" || port != want {
		t.Errorf("advertised %q, %v (listening on %s)", got, err, c.Addr())
	}
	if c.Addr().Network() != "tcp" || strings.HasPrefix(c.Addr().String(), "[") {
		t.Errorf("0.0.0.0 widened to %s", c.Addr())
	}
}

// TestOddEvents: an event with Python's bare NaN is written (JSON
// refuses it, the journal's decoder reads it), one that is no event is
// skipped and counted with the sequence advancing past it, and a line
// without a known key is ignored.
func TestOddEvents(t *testing.T) {
	c, s, log := start(t)
	cl := dial(t, c)
	cl.hello(c, 0, 1)
	cl.event(0, rankEvents(0, 1, time.Now())[0])
	cl.send(`{"seq":1,"ev":{"t":"metric","name":"loss","epoch":1,"batch":0,"value":NaN}}`)
	cl.send(`{"seq":2,"ev":{"no":"type"}}`)
	cl.send(`{"later":"a message of a newer client"}`)
	cl.send(`{"seq":3,"ev":{"t":"metric","name":"loss","epoch":1,"batch":1,"value":0.5}}`)
	if n := cl.bye(4); n != 4 {
		t.Errorf("bye answered %d, want 4", n)
	}
	ends, _ := c.Stop(DrainTime)
	if len(ends) != 1 || ends[0].Malformed != 1 || ends[0].Events != 4 {
		t.Errorf("ends %+v", ends)
	}
	evs, _ := journal(t, s, 0)
	if len(evs) != 3 || evs[1].Name != "loss" || !math.IsNaN(evs[1].Value) || evs[2].Value != 0.5 {
		t.Errorf("journal %+v", evs)
	}
	if !strings.Contains(log.String(), "rank 0: event 2 skipped") {
		t.Errorf("log: %s", log)
	}
	if nc, err := net.Dial("tcp", c.Addr().String()); err == nil {
		nc.Close()
		t.Error("a stopped collector still listens")
	}
}

// TestTooManyConnections: a connection over the limit is refused and
// logged; one that ends makes room.
func TestTooManyConnections(t *testing.T) {
	c, _, log := start(t)
	c.mu.Lock()
	c.maxConns = 2
	c.mu.Unlock()
	a, b := dial(t, c), dial(t, c)
	a.hello(c, 0, 2)
	b.hello(c, 1, 2) // both admitted: the third is over the limit
	over := dial(t, c)
	over.refused("more than 2 connections")
	if !strings.Contains(log.String(), "refused connection from "+over.nc.LocalAddr().String()+": more than") {
		t.Errorf("log: %s", log)
	}
	a.bye(0)
	a.nc.Close()
	for i := 0; ; i++ { // a's end reaches the collector after its close
		cl := dial(t, c)
		cl.send(`{"hello":1,"token":"` + c.Token() + `","run":"ddp","rank":0,"world":2}`)
		if m := cl.recv(); m["welcome"] != nil {
			break
		} else if i == 1000 {
			t.Fatalf("no room after a connection ended: %v", m)
		}
	}
}
