package collector

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gnnscope/gnnscope/sessions"
)

// Limits and times of a collector.
const (
	// MaxConns is the most connections open at once; one more is refused.
	MaxConns = 1024
	// MaxRanks is the most ranks a collector writes journals for.
	MaxRanks = 1024
	// DrainTime is how long Stop waits, by default, for the ranks' byes.
	DrainTime = 10 * time.Second
	// helloTimeout is how long a connection may take to say hello.
	helloTimeout = 30 * time.Second
	// writeTimeout bounds every reply: a client that reads none is dropped.
	writeTimeout = 10 * time.Second
	// flushEvery is the longest a streaming rank's events wait in the
	// journal's buffer.
	flushEvery = time.Second
)

// Options configure a collector.
type Options struct {
	// Addr is the TCP address to listen on, HOST:PORT: exactly that one.
	Addr string
	// Session and Run name the journals: rank R's is
	// Session.RankJournalPath(Run, R).
	Session *sessions.Session
	Run     string
	// Log receives a line per refused connection, per rank that connects,
	// and Stop's account (nil: none).
	Log io.Writer
	// Token is what a hello must present ("": a new random one, NewToken).
	Token string
}

// Collector receives ranks' events and writes their journals (see the
// package doc). Its methods are safe for concurrent use.
type Collector struct {
	opts  Options
	ln    net.Listener
	token string
	logMu sync.Mutex
	wg    sync.WaitGroup // the accept loop and every connection

	mu       sync.Mutex
	ranks    map[int]*rank
	conns    map[*conn]struct{}
	changed  chan struct{} // closed and replaced when a rank says bye or goes
	stopping bool
	maxConns int // MaxConns (tests lower it)
}

// NewToken returns a random token: 32 bytes from crypto/rand as 64 hex
// digits.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("collector token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Start listens on opts.Addr and serves connections until Stop. An
// address in use is an error naming it that wraps syscall.EADDRINUSE.
func Start(opts Options) (*Collector, error) {
	if opts.Session == nil || opts.Run == "" {
		return nil, errors.New("collector: no session or run")
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	token := opts.Token
	if token == "" {
		var err error
		if token, err = NewToken(); err != nil {
			return nil, err
		}
	}
	network, err := listenNetwork(opts.Addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen(network, opts.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, &inUseError{opts.Addr}
		}
		return nil, fmt.Errorf("collector: listen on %s: %w", opts.Addr, err)
	}
	c := &Collector{opts: opts, ln: ln, token: token, ranks: map[int]*rank{},
		conns: map[*conn]struct{}{}, changed: make(chan struct{}), maxConns: MaxConns}
	c.wg.Add(1)
	go c.accept()
	return c, nil
}

// inUseError is Start's error for an address another program listens on.
type inUseError struct{ addr string }

func (e *inUseError) Error() string {
	return "collector: address " + e.addr + " is already in use (another program listens there: pick another port)"
}

func (e *inUseError) Unwrap() error { return syscall.EADDRINUSE }

// listenNetwork is the network that listens on addr's host alone: tcp4
// for an IPv4 address (0.0.0.0 included, which "tcp" would widen to
// IPv6), tcp6 for an IPv6 one, tcp for a name or no host.
func listenNetwork(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("collector: listen address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "tcp", nil
	case ip.To4() != nil:
		return "tcp4", nil
	}
	return "tcp6", nil
}

// Addr returns the address listened on (its port chosen by the system
// when the given one was 0).
func (c *Collector) Addr() net.Addr { return c.ln.Addr() }

// Token returns the token a hello must present.
func (c *Collector) Token() string { return c.token }

// Advertised returns the address ranks connect to (GNNSCOPE_COLLECTOR):
// the listen address's host, or this machine's host name where it is
// unspecified (empty, 0.0.0.0, ::), with the port listened on.
func (c *Collector) Advertised() (string, error) {
	host, _, err := net.SplitHostPort(c.opts.Addr)
	if err != nil {
		return "", fmt.Errorf("collector address %s: %w", c.opts.Addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if host, err = os.Hostname(); err != nil {
			return "", fmt.Errorf("collector address %s: host name: %w", c.opts.Addr, err)
		}
	}
	_, port, err := net.SplitHostPort(c.ln.Addr().String())
	if err != nil {
		return "", fmt.Errorf("collector address %s: %w", c.ln.Addr(), err)
	}
	return net.JoinHostPort(host, port), nil
}

// accept admits connections until the listener closes, refusing those
// over MaxConns.
func (c *Collector) accept() {
	defer c.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			c.logf("collector: accept: %v", err) // out of descriptors, say
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		c.mu.Lock()
		if c.stopping || len(c.conns) >= c.maxConns {
			stopping, limit := c.stopping, c.maxConns
			c.mu.Unlock()
			reason := fmt.Sprintf("more than %d connections", limit)
			if stopping {
				reason = "the collector is stopping"
			}
			refuse(nc, reason)
			c.logRefused(nc, reason)
			nc.Close()
			continue
		}
		cn := newConn(nc)
		c.conns[cn] = struct{}{}
		c.wg.Add(1)
		c.mu.Unlock()
		go c.serve(cn)
	}
}

// signal wakes Stop's wait; c.mu is held.
func (c *Collector) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// RankEnd is Stop's account of a rank.
type RankEnd struct {
	Rank   int
	Node   string
	Events int64 // events written (the rank's next sequence number)
	Bye    bool  // the rank said bye
	// Malformed counts the events that did not decode, skipped.
	Malformed int64
}

// Stop waits up to grace for every rank that connected to say bye, then
// stops listening, closes every connection, ends the journals and logs
// the ranks that did not say bye. It returns each rank's account, by
// rank, and the first error closing a journal.
func (c *Collector) Stop(grace time.Duration) ([]RankEnd, error) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for waiting := true; waiting; {
		c.mu.Lock()
		all := true
		for _, rk := range c.ranks {
			all = all && rk.saidByeNow()
		}
		ch := c.changed
		c.mu.Unlock()
		if all {
			break
		}
		select {
		case <-ch:
		case <-timer.C:
			waiting = false
		}
	}
	c.mu.Lock()
	c.stopping = true
	conns := make([]*conn, 0, len(c.conns))
	for cn := range c.conns {
		conns = append(conns, cn)
	}
	c.mu.Unlock()
	c.ln.Close()
	for _, cn := range conns {
		cn.nc.Close()
	}
	c.wg.Wait()
	return c.end()
}

// end closes the ranks' journals once nothing serves them.
func (c *Collector) end() ([]RankEnd, error) {
	c.mu.Lock()
	ranks := make([]*rank, 0, len(c.ranks))
	for _, rk := range c.ranks {
		ranks = append(ranks, rk)
	}
	c.mu.Unlock()
	slices.SortFunc(ranks, func(a, b *rank) int { return a.id - b.id })
	var first error
	out := make([]RankEnd, 0, len(ranks))
	for _, rk := range ranks {
		end, err := rk.close()
		if err != nil && first == nil {
			first = err
		}
		if !end.Bye {
			c.logf("collector: rank %d (node %s) did not say bye; its journal has %d events", end.Rank, end.Node, end.Events)
		}
		out = append(out, end)
	}
	return out, first
}

func (c *Collector) logf(format string, a ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintf(c.opts.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, a...)...)
}

func (c *Collector) logRefused(nc net.Conn, reason string) {
	c.logf("refused connection from %s: %s", nc.RemoteAddr(), reason)
}

// refuse writes a refused line to nc (which the caller closes).
func refuse(nc net.Conn, reason string) {
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write(append(refusedLine(reason), '\n'))
}
