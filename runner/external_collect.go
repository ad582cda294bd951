package runner

import (
	"io"
	"sync"

	"github.com/gnnscope/gnnscope/runner/collector"
	"github.com/gnnscope/gnnscope/sessions"
)

// startCollector starts the collector of an external run whose command
// has ranks on other machines (ext.Listen set; else nil, nil, nil): it
// listens before the command starts, so an address in use fails the run
// before anything runs, and returns what the command's environment
// tells the ranks.
func startCollector(s *sessions.Session, run string, ext *External, log io.Writer) (*collector.Collector, *collectorEnv, error) {
	if ext.Listen == "" {
		return nil, nil, nil
	}
	// The collector logs from its connections' goroutines while the run
	// logs from its own: the caller passes a writer both may share
	// (lockedWriter).
	col, err := collector.Start(collector.Options{Addr: ext.Listen, Session: s, Run: run, Log: log})
	if err != nil {
		return nil, nil, err
	}
	addr, err := col.Advertised()
	if err != nil {
		col.Stop(0)
		return nil, nil, err
	}
	logf(log, "run %s: collecting ranks on %s (ranks connect to %s)", run, col.Addr(), addr)
	return col, &collectorEnv{addr: addr, token: col.Token()}, nil
}

// stopCollector ends a run's collector once the command has ended: it
// waits up to collector.DrainTime for the ranks' byes, then closes their
// connections and journals (nil: nothing to do).
func stopCollector(col *collector.Collector, run string, log io.Writer) {
	if col == nil {
		return
	}
	ends, err := col.Stop(collector.DrainTime)
	if err != nil {
		logf(log, "run %s: collector: %v", run, err)
	}
	byes := 0
	for _, e := range ends {
		if e.Bye {
			byes++
		}
	}
	logf(log, "run %s: collector stopped: %d rank(s) connected, %d said bye", run, len(ends), byes)
}

// lockedWriter serializes writes to w: the run and its collector log to
// one writer from different goroutines, a line (one Write) at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
