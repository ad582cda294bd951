package cuda

import (
	"sync"
	"sync/atomic"
)

// hazards tracks the side-stream work on one device buffer that the
// streams touching it next must be ordered after: the last write (a copy
// into it on the copy or history stream) and the reads since (copies out
// of it on the history stream). Compute-stream work needs no entry: the
// side streams wait for the compute stream as a whole before they touch
// the buffer (Device.useOn).
//
// A writer must wait for the pending write and for every read
// (write-after-read: a copy into the buffer must not overtake a copy out
// of it on another stream); a reader only for the pending write.
type hazards struct {
	pending atomic.Bool // any fence recorded: a cheap check before locking
	mu      sync.Mutex
	write   fence
	reads   []fence
}

// forSide returns the fences a side stream must wait for before it writes
// (write true) or reads the buffer. They stay recorded.
func (h *hazards) forSide(write bool) []fence {
	if !h.pending.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []fence
	if h.write != nil {
		out = append(out, h.write)
	}
	if write {
		out = append(out, h.reads...)
	}
	return out
}

// takeAll returns every fence and forgets them: the compute stream waits
// for them all before its next use of the buffer, after which waiting for
// compute covers them.
func (h *hazards) takeAll() []fence {
	if !h.pending.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.reads
	if h.write != nil {
		out = append(out, h.write)
	}
	h.write, h.reads = nil, nil
	h.pending.Store(false)
	return out
}

// setWrite records a side-stream write ending at f and returns the fence
// of the write it replaces (ordered before f on its stream, or waited for
// by it), for the caller to release; reads before the write stay recorded
// until compute waits for them.
func (h *hazards) setWrite(f fence) (old fence) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, h.write = h.write, f
	h.pending.Store(true)
	return old
}

// addRead records a side-stream read ending at f.
func (h *hazards) addRead(f fence) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, f)
	h.pending.Store(true)
}
