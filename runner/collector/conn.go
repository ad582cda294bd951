package collector

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// conn is one client connection.
type conn struct {
	nc   net.Conn
	r    *bufio.Reader
	buf  []byte        // a line longer than r's buffer, up to MaxLine
	done chan struct{} // closed when serve returns
	rank *rank         // set by the hello
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), done: make(chan struct{})}
}

// send writes one reply line.
func (cn *conn) send(b []byte) error {
	cn.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := cn.nc.Write(append(b, '\n'))
	return err
}

// refusal is a reason to refuse a connection after its hello.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

// serve runs a connection: the hello, then its lines until it ends.
func (c *Collector) serve(cn *conn) {
	defer c.release(cn)
	defer cn.nc.Close()
	cn.nc.SetReadDeadline(time.Now().Add(helloTimeout))
	line, err := readLine(cn.r, &cn.buf, MaxLine)
	if err != nil {
		reason := "no hello: " + err.Error()
		if errors.Is(err, errLineTooLong) {
			reason = err.Error()
		}
		refuse(cn.nc, reason)
		c.logRefused(cn.nc, reason)
		return
	}
	h, err := parseHello(line)
	if err == nil {
		err = c.admit(cn, h)
	}
	if err != nil {
		refuse(cn.nc, err.Error())
		c.logRefused(cn.nc, err.Error())
		return
	}
	next, err := cn.rank.attach(cn)
	if err != nil {
		refuse(cn.nc, err.Error())
		c.logRefused(cn.nc, err.Error())
		return
	}
	c.logf("collector: rank %d (node %s) connected from %s, resuming at event %d", *h.Rank, h.Node, cn.nc.RemoteAddr(), next)
	if cn.send(welcomeLine(next)) != nil {
		return
	}
	cn.nc.SetReadDeadline(time.Time{})
	if err := c.lines(cn); err != nil {
		var r *refusal
		if errors.As(err, &r) {
			refuse(cn.nc, r.reason)
			c.logRefused(cn.nc, r.reason)
		}
	}
}

// admit checks a hello against the run and finds (or makes) its rank.
func (c *Collector) admit(cn *conn, h hello) error {
	if subtle.ConstantTimeCompare([]byte(h.Token), []byte(c.token)) != 1 {
		if h.Token == "" {
			return errors.New("no token")
		}
		return errors.New("wrong token")
	}
	if h.Run != c.opts.Run {
		return fmt.Errorf("run %q is not the run being collected", h.Run)
	}
	r := *h.Rank
	if r < 0 || r >= max(h.World, 1) {
		return fmt.Errorf("rank %d outside 0 … %d", r, max(h.World, 1)-1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return errors.New("the collector is stopping")
	}
	rk, ok := c.ranks[r]
	if !ok {
		if len(c.ranks) >= MaxRanks {
			return fmt.Errorf("more than %d ranks", MaxRanks)
		}
		jw, err := openJournal(c.opts.Session, c.opts.Run, r)
		if err != nil {
			c.logf("collector: rank %d: %v", r, err)
			return errors.New("the collector cannot write the rank's journal")
		}
		rk = &rank{id: r, jw: jw, log: c.logf}
		c.ranks[r] = rk
		c.signal()
	}
	rk.hello(h)
	cn.rank = rk
	return nil
}

// release forgets a connection that ended.
func (c *Collector) release(cn *conn) {
	if cn.rank != nil {
		cn.rank.detach(cn)
	}
	c.mu.Lock()
	delete(c.conns, cn)
	c.signal()
	c.mu.Unlock()
	close(cn.done)
	c.wg.Done()
}

// lines handles a welcomed connection's lines until it ends: nil at its
// end or when replaced, a *refusal to send, or the read's error.
func (c *Collector) lines(cn *conn) error {
	rk := cn.rank
	dirty := false
	flushed := time.Now()
	for {
		line, err := readLine(cn.r, &cn.buf, MaxLine)
		t2 := time.Now().UnixNano()
		if err != nil {
			if dirty {
				rk.flush()
			}
			if errors.Is(err, errLineTooLong) {
				return &refusal{err.Error()}
			}
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		m, err := parseMessage(line)
		if err != nil {
			return &refusal{err.Error()}
		}
		switch m.Kind {
		case msgEvent:
			err = rk.event(cn, m.Seq, m.Ev)
			dirty = true
		case msgSync:
			err = cn.send(syncLine(m.Sync, t2, time.Now().UnixNano()))
		case msgClock:
			err = rk.clockReport(cn, m.Clock)
			dirty = true
		case msgBye:
			var n int64
			if n, err = rk.bye(cn, m.Bye); err == nil {
				dirty = false
				c.mu.Lock()
				c.signal()
				c.mu.Unlock()
				err = cn.send(byeLine(n))
			}
		}
		if errors.Is(err, errReplaced) {
			return nil
		}
		if err != nil {
			return err
		}
		// what is written reaches the file when the client pauses, and
		// at least every second while it streams (live views tail it)
		if dirty && (cn.r.Buffered() == 0 || time.Since(flushed) > flushEvery) {
			rk.flush()
			dirty, flushed = false, time.Now()
		}
	}
}
