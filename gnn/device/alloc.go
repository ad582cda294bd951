package device

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// OOMError is returned when an allocation would take the live bytes past
// the budget.
type OOMError struct {
	Requested int64 // bytes asked for
	Live      int64 // bytes live at the time of the request
	Budget    int64 // the budget in force
}

func (e *OOMError) Error() string {
	return fmt.Sprintf("out of memory: requested %d bytes with %d live, budget %d", e.Requested, e.Live, e.Budget)
}

// IsOOM reports whether err is (or wraps) an *OOMError.
func IsOOM(err error) bool {
	var o *OOMError
	return errors.As(err, &o)
}

// MemStats is a snapshot of an allocator's accounting.
type MemStats struct {
	Live   int64 // bytes currently allocated
	Peak   int64 // highest Live since the last ResetPeak
	Budget int64 // 0 = unlimited
	Allocs int64 // successful reservations
	Frees  int64 // releases
	OOMs   int64 // refused reservations
}

// Allocator counts bytes reserved by a device and enforces a budget. It is
// safe for concurrent use.
type Allocator struct {
	mu sync.Mutex
	s  MemStats
}

// NewAllocator returns an allocator with the given budget in bytes
// (0 = unlimited).
func NewAllocator(budget int64) *Allocator {
	return &Allocator{s: MemStats{Budget: budget}}
}

// Reserve accounts n bytes, or returns an *OOMError if that would exceed the
// budget (the accounting is then unchanged).
func (a *Allocator) Reserve(n int64) error {
	if n < 0 {
		return fmt.Errorf("allocator: negative reservation %d", n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.s.Budget > 0 && a.s.Live+n > a.s.Budget {
		a.s.OOMs++
		return &OOMError{Requested: n, Live: a.s.Live, Budget: a.s.Budget}
	}
	a.s.Live += n
	a.s.Allocs++
	if a.s.Live > a.s.Peak {
		a.s.Peak = a.s.Live
	}
	return nil
}

// Release returns n bytes reserved earlier.
func (a *Allocator) Release(n int64) {
	a.mu.Lock()
	a.s.Live -= n
	a.s.Frees++
	if a.s.Live < 0 {
		a.mu.Unlock()
		panic(fmt.Sprintf("allocator: released more than reserved (live %d)", a.s.Live))
	}
	a.mu.Unlock()
}

// Stats returns a snapshot of the accounting.
func (a *Allocator) Stats() MemStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s
}

// ResetPeak sets the peak to the current live bytes and returns the old peak.
func (a *Allocator) ResetPeak() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.s.Peak
	a.s.Peak = a.s.Live
	return p
}

// SetBudget changes the budget (0 = unlimited).
func (a *Allocator) SetBudget(b int64) {
	a.mu.Lock()
	a.s.Budget = b
	a.mu.Unlock()
}

// Scope counts the bytes of the allocations made through one scoped view of
// a device (see Scoped): its own live bytes and their peak, unaffected by
// what other goroutines allocate on the same device at the same time. It is
// how a trainer measures one batch's exact peak while sampler workers and an
// overlapped evaluator allocate concurrently. A Scope is safe for concurrent
// use.
type Scope struct {
	mu   sync.Mutex
	live int64
	peak int64
	own  map[*tensor.Tensor]int64
}

// NewScope returns an empty scope.
func NewScope() *Scope { return &Scope{own: map[*tensor.Tensor]int64{}} }

// Live returns the bytes allocated through the scope and not yet freed.
func (s *Scope) Live() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// Peak returns the highest Live since the scope was made or last reset.
func (s *Scope) Peak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// ResetPeak sets the peak to the current live bytes and returns the old peak.
func (s *Scope) ResetPeak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = s.live
	return p
}

func (s *Scope) add(t *tensor.Tensor) {
	n := t.Bytes()
	s.mu.Lock()
	s.own[t] = n
	s.live += n
	if s.live > s.peak {
		s.peak = s.live
	}
	s.mu.Unlock()
}

func (s *Scope) remove(t *tensor.Tensor) {
	s.mu.Lock()
	if n, ok := s.own[t]; ok {
		delete(s.own, t)
		s.live -= n
	}
	s.mu.Unlock()
}

// scoped is a Device whose Alloc and Free also account in a Scope.
type scoped struct {
	Device
	s *Scope
}

// Scoped returns a view of dev that allocates and frees through dev and
// also counts, in s, the bytes of the tensors allocated through the view.
// A tensor allocated through the view and freed through dev itself (or
// another view) stays counted in s; a tensor allocated elsewhere and freed
// through the view is freed but never counted. Everything else is dev's.
func Scoped(dev Device, s *Scope) Device { return &scoped{Device: dev, s: s} }

// Alloc allocates through the underlying device and counts the bytes.
func (d *scoped) Alloc(rows, cols int) (*tensor.Tensor, error) {
	t, err := d.Device.Alloc(rows, cols)
	if err == nil {
		d.s.add(t)
	}
	return t, err
}

// Unwrap returns the underlying device.
func (d *scoped) Unwrap() Device { return d.Device }

// Free frees through the underlying device and uncounts the bytes.
func (d *scoped) Free(t *tensor.Tensor) {
	if t != nil && !t.View {
		d.s.remove(t)
	}
	d.Device.Free(t)
}
