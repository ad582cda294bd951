package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// maxPending bounds the clock events a rank reports before its run_start,
// held until it is written (the journal's first line): the latest are
// kept.
const maxPending = 64

// errReplaced ends a connection whose rank a newer connection took over.
var errReplaced = errors.New("replaced by a newer connection")

// rank is one rank's state: its journal and the events written to it.
type rank struct {
	id    int
	log   func(format string, a ...any)
	greet sync.Mutex // serializes the rank's hellos (attach)

	mu        sync.Mutex
	jw        *sessions.JournalWriter
	active    *conn // the connection whose events are written
	next      int64 // events written: the sequence number expected
	node      string
	nodeRank  int
	clock     *profile.Clock
	started   bool            // run_start written
	pending   []profile.Event // clock events before run_start
	saidBye   bool
	malformed int64
	werr      error // the journal's first write error
}

// openJournal opens rank r's journal of run.
func openJournal(s *sessions.Session, run string, r int) (*sessions.JournalWriter, error) {
	return sessions.OpenJournal(s.RankJournalPath(run, r))
}

// hello notes what a hello says of the rank's machine.
func (rk *rank) hello(h hello) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	rk.node, rk.nodeRank = h.Node, h.NodeRank
}

// attach makes cn the rank's connection: an older one is closed, and
// its last complete lines are written, before the count of events the
// rank has is taken and returned.
func (rk *rank) attach(cn *conn) (int64, error) {
	rk.greet.Lock()
	defer rk.greet.Unlock()
	rk.mu.Lock()
	old := rk.active
	rk.mu.Unlock()
	if old != nil {
		old.nc.Close()
		<-old.done
	}
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.werr != nil {
		return 0, fmt.Errorf("the collector cannot write the rank's journal: %v", rk.werr)
	}
	rk.active = cn
	rk.saidBye = false
	return rk.next, nil
}

// detach forgets cn if it is still the rank's connection.
func (rk *rank) detach(cn *conn) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.active == cn {
		rk.active = nil
	}
}

// write appends events to the journal; rk.mu is held.
func (rk *rank) write(evs ...profile.Event) error {
	if err := rk.jw.WriteEvents(evs); err != nil {
		rk.werr = err
		rk.log("collector: rank %d: %v", rk.id, err)
		return &refusal{"the collector cannot write the rank's journal"}
	}
	return nil
}

// event writes event seq of the rank when it is the next one, drops it
// when the journal has it, and refuses a gap.
func (rk *rank) event(cn *conn, seq int64, raw json.RawMessage) error {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	switch {
	case rk.active != cn:
		return errReplaced
	case seq < rk.next:
		return nil
	case seq > rk.next:
		return &refusal{fmt.Sprintf("gap: expected seq %d, got %d", rk.next, seq)}
	}
	var e profile.Event
	if err := profile.DecodeEvent(raw, &e); err != nil {
		if rk.malformed == 0 {
			rk.log("collector: rank %d: event %d skipped: %v", rk.id, seq, err)
		}
		rk.malformed++
		rk.next++
		return nil
	}
	evs := []profile.Event{e}
	if e.T == profile.TypeRunStart && !rk.started {
		rk.placeStart(&evs[0])
		rk.started = true
		evs = append(evs, rk.pending...)
		rk.pending = nil
	}
	if err := rk.write(evs...); err != nil {
		return err
	}
	rk.next++
	return nil
}

// placeStart moves a run_start onto the collector's clock by the rank's
// latest clock report (wall = the rank's wall + offset, wall_local the
// rank's own, clock the report), and fills in the node the hello named
// where the client did not.
func (rk *rank) placeStart(e *profile.Event) {
	if e.Node == "" {
		e.Node = rk.node
	}
	if e.NodeRank == 0 {
		e.NodeRank = rk.nodeRank
	}
	if rk.clock == nil {
		return
	}
	w, err := e.WallTime()
	if err != nil {
		rk.log("collector: rank %d: run_start's wall %q is no time, left as it is", rk.id, e.Wall)
		return
	}
	c := *rk.clock
	e.WallLocal = e.Wall
	e.Wall = w.Add(time.Duration(c.Offset)).UTC().Format(time.RFC3339Nano)
	e.Clock = &c
}

// clockReport keeps the rank's clock estimate and journals it as a clock
// event (after run_start, which stays the journal's first line).
func (rk *rank) clockReport(cn *conn, r clockReport) error {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.active != cn {
		return errReplaced
	}
	c := profile.Clock{Offset: r.Offset, Delay: r.Delay, Samples: r.Samples}
	rk.clock = &c
	e := profile.Event{T: profile.TypeClock, Ts: r.Ts, Clock: &c}
	if !rk.started {
		if len(rk.pending) == maxPending {
			rk.pending = append(rk.pending[:0], rk.pending[1:]...)
		}
		rk.pending = append(rk.pending, e)
		return nil
	}
	return rk.write(e)
}

// bye flushes the journal, marks the rank done and returns its count of
// events.
func (rk *rank) bye(cn *conn, n int64) (int64, error) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.active != cn {
		return 0, errReplaced
	}
	if err := rk.jw.Flush(); err != nil {
		rk.log("collector: rank %d: %v", rk.id, err)
	}
	if n != rk.next {
		rk.log("collector: rank %d says bye with %d events; its journal has %d", rk.id, n, rk.next)
	}
	rk.saidBye = true
	return rk.next, nil
}

// flush writes the journal's buffer to its file.
func (rk *rank) flush() {
	if err := rk.jw.Flush(); err != nil {
		rk.log("collector: rank %d: %v", rk.id, err)
	}
}

// saidByeNow reports whether the rank's last connection said bye.
func (rk *rank) saidByeNow() bool {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	return rk.saidBye
}

// close writes clock events still held (no run_start came) and closes
// the journal.
func (rk *rank) close() (RankEnd, error) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if len(rk.pending) > 0 && rk.werr == nil {
		rk.write(rk.pending...)
		rk.pending = nil
	}
	end := RankEnd{Rank: rk.id, Node: rk.node, Events: rk.next, Bye: rk.saidBye, Malformed: rk.malformed}
	return end, rk.jw.Close()
}
