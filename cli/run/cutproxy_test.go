package run_test

import (
	"bytes"
	"encoding/json"
	"net"
	"sync"
	"testing"
)

// cutProxy forwards TCP connections from a loopback port to a collector,
// keeping a copy of what went each way, and cuts the first connection of
// each rank (the rank its hello names) once it has forwarded cutAfter
// bytes towards the collector: both sides are closed, as a network that
// drops a node's connection would, while the rank goes on.
type cutProxy struct {
	ln       net.Listener
	target   string
	cutAfter int

	mu    sync.Mutex
	conns []*proxied
	cut   map[int]bool // ranks whose first connection was cut
	open  map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// proxied is one connection through the proxy.
type proxied struct {
	rank int // from the hello; -1 before it
	cut  bool
	up   bytes.Buffer // client to collector, as read from the client
	// forwarded is how much of up reached the collector: all of it, but
	// for a cut connection.
	forwarded int
	down      bytes.Buffer // collector to client, as forwarded
}

func newCutProxy(t *testing.T, target string, cutAfter int) *cutProxy {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, cutAfter: cutAfter, cut: map[int]bool{}, open: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

// accept runs until the listener closes.
func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp4", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pc := &proxied{rank: -1}
		p.mu.Lock()
		p.conns = append(p.conns, pc)
		p.open[c], p.open[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.upstream(pc, c, s)
		go p.downstream(pc, s, c)
	}
}

// upstream forwards client c to collector s, cutting both at cutAfter
// bytes when pc is its rank's first connection.
func (p *cutProxy) upstream(pc *proxied, c, s net.Conn) {
	defer p.wg.Done()
	defer p.drop(c, s)
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			data := buf[:n]
			if pc.rank < 0 {
				pc.rank = helloRank(append(bytes.Clone(pc.up.Bytes()), data...))
				if pc.rank >= 0 && !p.cut[pc.rank] {
					p.cut[pc.rank], pc.cut = true, true
				}
			}
			stop := false
			pc.up.Write(data)
			if pc.cut && pc.forwarded+n >= p.cutAfter {
				data, stop = data[:p.cutAfter-pc.forwarded], true
			}
			pc.forwarded += len(data)
			p.mu.Unlock()
			if _, werr := s.Write(data); werr != nil || stop {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// downstream forwards collector s to client c.
func (p *cutProxy) downstream(pc *proxied, s, c net.Conn) {
	defer p.wg.Done()
	defer p.drop(c, s)
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			p.mu.Lock()
			pc.down.Write(buf[:n])
			p.mu.Unlock()
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) drop(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.open, c)
	}
}

// close stops the proxy and waits for its goroutines.
func (p *cutProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// rankConns returns a copy of the connections of rank r, in the order
// they were accepted.
func (p *cutProxy) rankConns(r int) []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxied
	for _, pc := range p.conns {
		if pc.rank == r {
			cp := proxied{rank: pc.rank, cut: pc.cut, forwarded: pc.forwarded}
			cp.up.Write(pc.up.Bytes())
			cp.down.Write(pc.down.Bytes())
			out = append(out, cp)
		}
	}
	return out
}

// helloRank is the rank a connection's first line names, -1 while the
// line is incomplete or names none.
func helloRank(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return -1
	}
	var h struct {
		Rank *int `json:"rank"`
	}
	if json.Unmarshal(b[:i], &h) != nil || h.Rank == nil {
		return -1
	}
	return *h.Rank
}

// wireLine is any line of the protocol, either way (docs/collector.md).
type wireLine struct {
	Seq     *int64          `json:"seq"`
	Ev      json.RawMessage `json:"ev"`
	Bye     *int64          `json:"bye"`
	Welcome int             `json:"welcome"`
	Next    *int64          `json:"next"`
	Refused string          `json:"refused"`
}

// wireLines decodes the complete lines of b (a cut connection's last
// line may be incomplete: it is left out, as the collector leaves it).
func wireLines(b []byte) ([]wireLine, error) {
	var out []wireLine
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return out, nil
		}
		var l wireLine
		if err := json.Unmarshal(b[:i], &l); err != nil {
			return out, err
		}
		out = append(out, l)
		b = b[i+1:]
	}
}
