package run_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// The two-node job: nodes × perNode ranks of examples/pytorch/sage_train.py
// under DDP (gloo, loopback), each pausing 2 ms after its backward
// (testdata/yield_after_backward.py): four ranks share the test machine's
// two cores, and without the pause the rank that reads its all-reduce's
// end first runs on while the other waits for a core, which put the
// ranks' backward ends milliseconds apart (residuals of 1 to 3 ms, up to
// 100 ms in single steps under load): the scheduler, not the clocks.
const (
	nodes      = 2
	perNode    = 2
	trainNodes = 2000 // graph nodes; 70 % train
	batchSize  = 64
	epochs     = 4
	// cutAfter is where the proxy cuts node 1's connections: past the
	// hello, the clock exchanges and the run_start, well before the end.
	cutAfter = 3000
	// clockOffset is node 1's injected clock error (twonodes.py).
	clockOffset = 250 * time.Millisecond
)

// A job whose ranks stream to the run's collector from two "nodes", one
// of them behind a connection that drops midway and with a clock 250 ms
// ahead, is one session: a journal per rank, each rank's start on the
// collector's clock (the backward ends of a step, where DDP's all-reduce
// ends, agree within 1 ms, where the ranks' own clocks put them 250 ms
// apart), no event lost or doubled by the drop, and connections with a
// wrong token or none refused and logged.
func TestTwoNodesOneClock(t *testing.T) {
	needTorchClient(t)
	home, spill := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	t.Setenv("GNNSCOPE_SPILL_DIR", spill)
	listen := freeLoopback(t)
	proxy := newCutProxy(t, listen, cutAfter)
	root := clitest.ModuleRoot(t)
	testdata := filepath.Join(root, "cli", "run", "testdata")
	cmd := fmt.Sprintf("two=%s %s %s %d %s %s %s --nodes %d --features 16 --hidden 16 --batch-size %d --epochs %d --workers 0 --device cpu",
		systemPython, filepath.Join(testdata, "twonodes.py"), proxy.addr(), perNode,
		systemPython, filepath.Join(testdata, "yield_after_backward.py"),
		filepath.Join(root, "examples", "pytorch", "sage_train.py"), trainNodes, batchSize, epochs)
	type result struct {
		stderr string
		err    error
	}
	done := make(chan result, 1)
	var ended atomic.Bool
	go func() {
		_, stderr, err := clitest.Run(t, "run", "--cmd", cmd, "--listen", listen, "--wait", "-q")
		ended.Store(true)
		done <- result{stderr, err}
	}()
	refused := intruders(t, listen, &ended)
	var res result
	select {
	case res = <-done:
	case <-time.After(5 * time.Minute): // a safety net against a hung job, not a timing assertion
		s := clitest.OnlySession(t, home)
		clitest.StopAll(t, home, s)
		log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "two.log"))
		t.Fatalf("the job has not ended after 5 minutes; canceled\nlog:\n%s", log)
	}
	s := clitest.OnlySession(t, home)
	log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "two.log"))
	if res.err != nil {
		t.Fatalf("%v\n%s\nlog:\n%s", res.err, res.stderr, log)
	}
	if len(refused) == 0 {
		t.Fatalf("the run ended before a connection without the token could be tried\nlog:\n%s", log)
	}
	for _, want := range refused {
		if !strings.Contains(string(log), want) {
			t.Errorf("the run's log lacks %q:\n%s", want, log)
		}
	}
	if states, err := runner.RunStates(s); err != nil || len(states) != 1 || states[0].Status != profile.StatusOK {
		t.Errorf("runs %+v, %v: want the one run two, ok", states, err)
	}
	if left, _ := filepath.Glob(filepath.Join(spill, "*.spill.jsonl")); len(left) > 0 {
		t.Errorf("spill files kept (the collector lacked events): %v\nlog:\n%s", left, log)
	}
	journals := rankJournals(t, s, "two")
	checkRankStarts(t, journals)
	for r := perNode; r < nodes*perNode; r++ {
		checkDropped(t, proxy, r, journals[r])
	}
	checkAlignment(t, s, journals)
	checkExplained(t, s)
}

// checkExplained reads the ranks as `gnnscope explain --format json`
// reports them: every rank's alignment residual under 1 ms, and a clock
// offset of about -250 ms for node 1's ranks and about 0 for node 0's.
func checkExplained(t *testing.T, s *sessions.Session) {
	t.Helper()
	out, stderr, err := clitest.Run(t, "explain", s.ID(), "--format", "json")
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, stderr)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("explain's JSON: %v", err)
	}
	residuals, offsets := map[int]float64{}, map[int]float64{}
	walkRanks(doc, func(m map[string]any) {
		r, ok := m["rank"].(float64)
		if !ok {
			return
		}
		if v, ok := m["residual_s"].(float64); ok {
			residuals[int(r)] = v
		}
		if v, ok := m["clock_offset_s"].(float64); ok {
			offsets[int(r)] = v
		}
	})
	for r := 0; r < nodes*perNode; r++ {
		res, ok := residuals[r]
		if !ok || res <= -1e-3 || res >= 1e-3 {
			t.Errorf("explain: rank %d residual %v (reported: %v), want under 1 ms", r, res, ok)
		}
		want := 0.0
		if r/perNode == 1 {
			want = -clockOffset.Seconds()
		}
		if off, ok := offsets[r]; !ok || off < want-1e-3 || off > want+1e-3 {
			t.Errorf("explain: rank %d clock offset %v (reported: %v), want %v within 1 ms", r, off, ok, want)
		}
	}
}

// walkRanks calls f on every JSON object under v.
func walkRanks(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, c := range x {
			walkRanks(c, f)
		}
	case []any:
		for _, c := range x {
			walkRanks(c, f)
		}
	}
}

// freeLoopback returns 127.0.0.1:PORT with a port free a moment ago.
func freeLoopback(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// intruders connect to the collector at addr once it listens, say hello
// with a wrong token and then with none, and check the refusals; they
// return the lines the run's log must hold, none when the run ended
// first.
func intruders(t *testing.T, addr string, ended *atomic.Bool) []string {
	var lines []string
	for _, c := range []struct{ token, reason string }{{strings.Repeat("0", 64), "wrong token"}, {"", "no token"}} {
		var nc net.Conn
		clitest.WaitFor(t, "the collector to listen", func() bool {
			var err error
			nc, err = net.DialTimeout("tcp4", addr, time.Second)
			return err == nil || ended.Load()
		})
		if nc == nil {
			return nil
		}
		nc.SetDeadline(time.Now().Add(30 * time.Second))
		hello, _ := json.Marshal(map[string]any{"hello": 1, "token": c.token, "run": "two", "rank": 0,
			"world": nodes * perNode, "node": "intruder", "node_rank": 9})
		nc.Write(append(hello, '\n'))
		line, err := bufio.NewReader(nc).ReadString('\n')
		if want := `{"refused":"` + c.reason + `"}`; err != nil || strings.TrimSpace(line) != want {
			t.Errorf("a hello with token %q: answer %q, %v; want %s", c.token, line, err, want)
		}
		lines = append(lines, "refused connection from "+nc.LocalAddr().String()+": "+c.reason)
		nc.Close()
	}
	return lines
}

// rankJournal is one rank's journal: its events and its lines.
type rankJournal struct {
	evs   []profile.Event
	lines [][]byte
}

// rankJournals reads the journal of every rank of the job, checking
// there is one per rank and no other.
func rankJournals(t *testing.T, s *sessions.Session, run string) []rankJournal {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.RunsDir(), run+"*.jsonl"))
	if len(files) != nodes*perNode {
		t.Fatalf("journals %v, want one per rank (%d)", files, nodes*perNode)
	}
	out := make([]rankJournal, nodes*perNode)
	for r := range out {
		path := s.RankJournalPath(run, r)
		evs, st, err := sessions.ReadJournal(path)
		if err != nil || st.Malformed > 0 {
			t.Fatalf("rank %d: %v, %+v", r, err, st)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[r] = rankJournal{evs: evs, lines: bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))}
	}
	return out
}

// checkRankStarts checks each rank's run_start (rank, world, node_rank
// and the clock that moved it: node 1's offset removes the 250 ms within
// the exchange's uncertainty, half its round trip) and that every rank
// trained every batch once, with no line written twice.
func checkRankStarts(t *testing.T, journals []rankJournal) {
	t.Helper()
	perRank := (trainNodes*7/10 + nodes*perNode - 1) / (nodes * perNode)
	batches := (perRank + batchSize - 1) / batchSize
	for r, j := range journals {
		rs := j.evs[0]
		if rs.T != profile.TypeRunStart || rs.Rank != r || rs.World != nodes*perNode || rs.NodeRank != r/perNode {
			t.Fatalf("rank %d: run_start %+v", r, rs)
		}
		if rs.Node == "" || rs.Clock == nil || rs.WallLocal == "" {
			t.Fatalf("rank %d: run_start without a clock: %+v", r, rs)
		}
		want := int64(0)
		if rs.NodeRank == 1 {
			want = -int64(clockOffset)
		}
		if err := abs(rs.Clock.Offset-want) - rs.Clock.Delay/2; err > 1 {
			t.Errorf("rank %d: offset %v ± %v, want %v", r, time.Duration(rs.Clock.Offset), time.Duration(rs.Clock.Delay/2), time.Duration(want))
		}
		w, err1 := rs.WallTime()
		wl, err2 := time.Parse(time.RFC3339Nano, rs.WallLocal)
		if err1 != nil || err2 != nil || w.Sub(wl) != time.Duration(rs.Clock.Offset) {
			t.Errorf("rank %d: wall %s, wall_local %s, offset %d", r, rs.Wall, rs.WallLocal, rs.Clock.Offset)
		}
		t.Logf("rank %d, node %d: offset %.3f ms ± %.3f ms (%d samples)", r, rs.NodeRank,
			float64(rs.Clock.Offset)/1e6, float64(rs.Clock.Delay)/2e6, rs.Clock.Samples)
		seen := map[string]bool{}
		for _, l := range j.lines {
			if !bytes.HasPrefix(l, []byte(`{"t":"clock"`)) && seen[string(l)] {
				t.Errorf("rank %d: line written twice: %s", r, l)
			}
			seen[string(l)] = true
		}
		var steps []string
		for _, e := range j.evs {
			if e.T == profile.TypeSpan && e.Name == profile.StageBackward {
				steps = append(steps, fmt.Sprintf("%d/%d", e.Epoch, e.Batch))
			}
		}
		var wantSteps []string
		for e := 1; e <= epochs; e++ {
			for b := range batches {
				wantSteps = append(wantSteps, fmt.Sprintf("%d/%d", e, b))
			}
		}
		if !slices.Equal(steps, wantSteps) {
			t.Errorf("rank %d: backward spans of steps %v, want %v", r, steps, wantSteps)
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// checkDropped checks rank r's events streamed through the proxy: its
// first connection was cut with events written and events still to send,
// it reconnected, and its journal holds exactly the events the client
// numbered 0 … S−1, S its count in the bye (the collector's count the
// same), each once, whatever was sent twice around the cut.
func checkDropped(t *testing.T, p *cutProxy, r int, j rankJournal) {
	t.Helper()
	conns := p.rankConns(r)
	if len(conns) < 2 || !conns[0].cut || conns[1].cut {
		t.Fatalf("rank %d: %d connection(s) through the proxy, want its first cut and a second", r, len(conns))
	}
	sent := map[int64]json.RawMessage{} // every complete event line the client sent
	resent := 0
	var bye, answer, resumed int64 = -1, -1, -1
	delivered, err := wireLines(conns[0].up.Bytes()[:conns[0].forwarded])
	if err != nil {
		t.Fatalf("rank %d: %v", r, err)
	}
	before := 0 // event lines that reached the collector before the cut
	for _, l := range delivered {
		if l.Seq != nil {
			before++
		}
	}
	for i, c := range conns {
		up, err := wireLines(c.up.Bytes())
		if err != nil {
			t.Fatalf("rank %d, connection %d: %v", r, i, err)
		}
		for _, l := range up {
			switch {
			case l.Seq != nil:
				if old, ok := sent[*l.Seq]; ok {
					resent++
					if !bytes.Equal(old, l.Ev) {
						t.Errorf("rank %d: event %d sent again changed:\n%s\n%s", r, *l.Seq, old, l.Ev)
					}
				}
				sent[*l.Seq] = l.Ev
			case l.Bye != nil:
				bye = *l.Bye
			}
		}
		down, err := wireLines(c.down.Bytes())
		if err != nil {
			t.Fatalf("rank %d, connection %d: %v", r, i, err)
		}
		for _, l := range down {
			switch {
			case l.Welcome == 1 && l.Next != nil && i == 1:
				resumed = *l.Next
			case l.Bye != nil:
				answer = *l.Bye
			}
		}
	}
	var written []profile.Event
	for _, e := range j.evs {
		if e.T != profile.TypeClock {
			written = append(written, e)
		}
	}
	t.Logf("rank %d: cut after %d bytes (%d events through), resumed at event %d of %d (%d sent twice); bye %d, answered %d",
		r, cutAfter, before, resumed, bye, resent, bye, answer)
	if resumed <= 0 || resumed >= bye {
		t.Errorf("rank %d: resumed at event %d of %d: the cut was not midway", r, resumed, bye)
	}
	if resumed != int64(before) {
		t.Errorf("rank %d: the collector had %d events at the reconnection; %d complete event lines reached it", r, resumed, before)
	}
	if bye != answer || int(bye) != len(written) {
		t.Fatalf("rank %d: bye %d, the collector's %d, journal %d events", r, bye, answer, len(written))
	}
	for i, e := range written {
		raw, ok := sent[int64(i)]
		if !ok {
			t.Fatalf("rank %d: event %d in the journal was never sent", r, i)
		}
		var want profile.Event
		if err := profile.DecodeEvent(raw, &want); err != nil {
			t.Fatalf("rank %d: event %d: %v", r, i, err)
		}
		if e.T == profile.TypeRunStart { // moved onto the collector's clock
			e.Wall, e.WallLocal, e.Clock = e.WallLocal, "", nil
		}
		if !reflect.DeepEqual(e, want) {
			t.Errorf("rank %d: journal event %d\n%+v\nwas sent as\n%+v", r, i, e, want)
		}
	}
}

// checkAlignment checks that after alignment the ranks' backward ends of
// each step agree within 1 ms (a rank's residual: the median over steps
// of its end minus the step's median end), in the journals and in the
// session's merged reading, where the ranks' own clocks put node 1's
// 250 ms from node 0's.
func checkAlignment(t *testing.T, s *sessions.Session, journals []rankJournal) {
	t.Helper()
	aligned := map[int]map[string]int64{} // rank -> step -> backward end, ns
	local := map[int]map[string]int64{}
	for r, j := range journals {
		w, _ := j.evs[0].WallTime()
		wl, _ := time.Parse(time.RFC3339Nano, j.evs[0].WallLocal)
		aligned[r], local[r] = backwardEnds(j.evs, w.UnixNano()), backwardEnds(j.evs, wl.UnixNano())
	}
	merged, _, err := s.ReadRun("two")
	if err != nil {
		t.Fatal(err)
	}
	byLane := map[int][]profile.Event{}
	for _, e := range merged {
		var r int
		if _, err := fmt.Sscanf(e.Lane, "rank%d/", &r); err == nil {
			byLane[r] = append(byLane[r], e)
		}
	}
	session := map[int]map[string]int64{}
	for r := range journals {
		session[r] = backwardEnds(byLane[r], 0)
	}
	resA, resL, resS := residuals(aligned), residuals(local), residuals(session)
	var node0, node1 float64
	for r := range journals {
		t.Logf("rank %d: backward-end residual %.3f ms aligned (%.3f ms in the session's reading), %.3f ms on its own clock",
			r, float64(resA[r])/1e6, float64(resS[r])/1e6, float64(resL[r])/1e6)
		if abs(resA[r]) >= int64(time.Millisecond) || abs(resS[r]) >= int64(time.Millisecond) {
			t.Errorf("rank %d: residual %v aligned, %v in the session: want under 1 ms", r, time.Duration(resA[r]), time.Duration(resS[r]))
		}
		if r/perNode == 1 {
			node1 += float64(resL[r]) / perNode
		} else {
			node0 += float64(resL[r]) / perNode
		}
	}
	// unaligned, node 1's ends are late by the injected offset
	if gap := time.Duration(node1 - node0); gap < clockOffset*4/5 || gap > clockOffset*6/5 {
		t.Errorf("on the ranks' own clocks node 1 ends %v after node 0, want about %v", gap, clockOffset)
	}
}

// backwardEnds returns the end of each step's backward span, by
// "epoch/batch", in ns from base.
func backwardEnds(evs []profile.Event, base int64) map[string]int64 {
	out := map[string]int64{}
	for _, e := range evs {
		if e.T == profile.TypeSpan && e.Name == profile.StageBackward {
			out[strconv.Itoa(e.Epoch)+"/"+strconv.Itoa(e.Batch)] = base + e.Start + e.Dur
		}
	}
	return out
}

// residuals returns each rank's median over steps of its end minus the
// median of the ranks' ends of the step (steps every rank has).
func residuals(ends map[int]map[string]int64) map[int]int64 {
	per := map[int][]int64{}
	for step := range ends[0] {
		var all []int64
		for r := range ends {
			if v, ok := ends[r][step]; ok {
				all = append(all, v)
			}
		}
		if len(all) != len(ends) {
			continue
		}
		m := median(all)
		for r := range ends {
			per[r] = append(per[r], ends[r][step]-m)
		}
	}
	out := map[int]int64{}
	for r, v := range per {
		out[r] = median(v)
	}
	return out
}

// median of v (the mean of the middle two for an even count).
func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
