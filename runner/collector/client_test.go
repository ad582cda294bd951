package collector

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// A test client of the wire protocol, and what the tests share.

// testRun is the run every test collects.
const testRun = "ddp"

// bound is how long a test waits for any one reply before it fails: a
// bound on a hang, not a timing being measured.
const bound = 20 * time.Second

// lockedBuffer is a log safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start returns a collector of testRun on a loopback port, its session
// and its log; the collector is stopped at the test's end.
func start(t *testing.T) (*Collector, *sessions.Session, *lockedBuffer) {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "collect"})
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	c, err := Start(Options{Addr: "127.0.0.1:0", Session: s, Run: testRun, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(0) })
	return c, s, log
}

// client is one connection of a test rank. skew is added to every
// wall-clock reading, as on a machine whose clock is off by that much.
type client struct {
	t    *testing.T
	nc   net.Conn
	r    *bufio.Reader
	skew time.Duration
}

func dial(t *testing.T, c *Collector) *client {
	t.Helper()
	nc, err := net.Dial("tcp", c.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (cl *client) wall() time.Time { return time.Now().Add(cl.skew) }

// send writes one line (a value marshaled, or a string as it is).
func (cl *client) send(v any) {
	cl.t.Helper()
	b, ok := v.(string)
	if !ok {
		j, err := json.Marshal(v)
		if err != nil {
			cl.t.Fatal(err)
		}
		b = string(j)
	}
	if _, err := cl.nc.Write([]byte(b + "\n")); err != nil {
		cl.t.Fatalf("send %.80s: %v", b, err)
	}
}

// recv reads one reply line into a map.
func (cl *client) recv() map[string]any {
	cl.t.Helper()
	cl.nc.SetReadDeadline(time.Now().Add(bound))
	line, err := cl.r.ReadBytes('\n')
	if err != nil {
		cl.t.Fatalf("read a reply: %v (got %q)", err, line)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		cl.t.Fatalf("reply %q: %v", line, err)
	}
	return m
}

// num reads an integer field of a reply.
func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("reply %v has no number %q", m, key)
	}
	v, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// hello says hello as rank of world and returns the welcome's next.
func (cl *client) hello(c *Collector, rank, world int) int64 {
	cl.t.Helper()
	cl.send(map[string]any{"hello": 1, "token": c.Token(), "run": testRun, "rank": rank, "world": world,
		"node": "node" + string(rune('a'+rank)), "node_rank": rank})
	m := cl.recv()
	if num(cl.t, m, "welcome") != 1 {
		cl.t.Fatalf("no welcome: %v", m)
	}
	return num(cl.t, m, "next")
}

// refused expects a refused reply naming reason, then the end of the
// connection.
func (cl *client) refused(reason string) {
	cl.t.Helper()
	m := cl.recv()
	if got, _ := m["refused"].(string); !strings.Contains(got, reason) {
		cl.t.Fatalf("reply %v, want refused: %s", m, reason)
	}
	if _, err := cl.r.ReadByte(); err == nil {
		cl.t.Fatal("the connection stays open after refused")
	}
}

// syncClock makes n clock exchanges and returns the estimate of lowest
// delay, NTP-style, as docs/collector.md says.
func (cl *client) syncClock(n int) profile.Clock {
	cl.t.Helper()
	best := profile.Clock{Samples: n}
	for i := 0; i < n; i++ {
		t1 := cl.wall().UnixNano()
		cl.send(map[string]int64{"sync": t1})
		m := cl.recv()
		t4 := cl.wall().UnixNano()
		if num(cl.t, m, "sync") != t1 {
			cl.t.Fatalf("sync answer %v for %d", m, t1)
		}
		t2, t3 := num(cl.t, m, "t2"), num(cl.t, m, "t3")
		off, delay := ((t2-t1)+(t3-t4))/2, (t4-t1)-(t3-t2)
		if i == 0 || delay < best.Delay {
			best.Offset, best.Delay = off, delay
		}
	}
	return best
}

// report sends a clock report.
func (cl *client) report(c profile.Clock, ts int64) {
	cl.send(map[string]any{"clock": map[string]int64{"ts": ts, "offset": c.Offset, "delay": c.Delay, "samples": int64(c.Samples)}})
}

// event sends event seq.
func (cl *client) event(seq int, e profile.Event) {
	cl.send(`{"seq":` + strconv.Itoa(seq) + `,"ev":` + string(profile.AppendEvent(nil, &e)) + `}`)
}

// bye says bye with n events and returns the collector's count.
func (cl *client) bye(n int) int64 {
	cl.t.Helper()
	cl.send(map[string]int{"bye": n})
	return num(cl.t, cl.recv(), "bye")
}
