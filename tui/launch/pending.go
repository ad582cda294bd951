package launch

import (
	"fmt"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// Pending keeps count of the launches under way, so that the workbench
// can wait for them when it quits: a launch is a command running beside
// the program, and a program that exits in its middle would end it with
// the session half made (L then q at once). Its zero value is ready.
type Pending struct {
	mu       sync.Mutex
	running  map[int]string // launch number -> what it launches
	next     int
	outcomes []string
	changed  chan struct{} // closed and replaced on every change
}

// Wrap returns l counted by p: each call is under way from its start to
// its return, and its outcome is kept for Wait.
func (p *Pending) Wrap(l Launcher) Launcher {
	return func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		id := p.start(describe(exp))
		s, err := l(exp, variants)
		switch {
		case err != nil:
			p.finish(id, fmt.Sprintf("the launch of %s did not complete: %v", describe(exp), err))
		default:
			p.finish(id, fmt.Sprintf("launched session %s (%s); its runs go on in the background", s.ID(), describe(exp)))
		}
		return s, err
	}
}

func (p *Pending) start(what string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running = map[int]string{}
	}
	p.next++
	p.running[p.next] = what
	p.signal()
	return p.next
}

func (p *Pending) finish(id int, outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, id)
	p.outcomes = append(p.outcomes, outcome)
	p.signal()
}

// signal wakes Wait; p.mu is held.
func (p *Pending) signal() {
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
}

// Running returns what the launches under way launch.
func (p *Pending) Running() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, what := range p.running {
		out = append(out, what)
	}
	return out
}

// Wait waits up to max for the launches under way to end and returns the
// outcomes of the launches that ended since the last Wait (one line
// each) and what is still under way when max has passed.
func (p *Pending) Wait(max time.Duration) (outcomes, still []string) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for waiting := true; waiting; {
		p.mu.Lock()
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed, n := p.changed, len(p.running)
		p.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-changed:
		case <-deadline.C:
			waiting = false
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	outcomes, p.outcomes = p.outcomes, nil
	for _, what := range p.running {
		still = append(still, what)
	}
	return outcomes, still
}
