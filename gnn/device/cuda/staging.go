package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// hostDriver is what the staging pool needs from the driver: page-locked
// host memory and fences (see memDriver).
type hostDriver interface {
	hostAlloc(bytes int64) (unsafe.Pointer, error)
	hostFree(p unsafe.Pointer) error
	fenceDone(f fence) bool
	fenceWait(f fence) error
	fenceRelease(f fence)
}

// hostBuf is a page-locked host buffer. Copies between it and the device
// run asynchronously (a copy from pageable memory would not).
type hostBuf struct {
	ptr   unsafe.Pointer
	size  int64
	class int
	fence fence  // the last copy that used it; the buffer is busy until it completes
	seq   uint64 // when it was put back: the oldest copy is waited for first
}

// floats returns the buffer's first n float32s.
func (b *hostBuf) floats(n int) []float32 { return unsafe.Slice((*float32)(b.ptr), n) }

// bytes returns the buffer's first n bytes.
func (b *hostBuf) bytes(n int) []byte { return unsafe.Slice((*byte)(b.ptr), n) }

// Staging buffers come in power-of-two classes from minStage to maxStage
// bytes; larger transfers are split into pieces of maxStage, so that
// copies of consecutive pieces overlap the host's filling of the next.
const (
	minStageShift = 16 // 64 KiB
	maxStageShift = 24 // 16 MiB
	maxStage      = 1 << maxStageShift
	stageClasses  = maxStageShift - minStageShift + 1

	// defaultStageBudget is the pinned bytes the pool may hold before a
	// request waits for a copy, until expect raises it.
	defaultStageBudget = 128 << 20
	// maxStageBudget bounds what expect raises the budget to.
	maxStageBudget = 1 << 30
	// stageScan is how many of a class's idle buffers, oldest first, a
	// request queries for a completed copy.
	stageScan = 8
)

// StagingStats describes the pinned staging buffers.
type StagingStats struct {
	Pinned     int64 // pinned bytes held, idle or in use
	PeakPinned int64 // highest Pinned
	Budget     int64 // pinned bytes held before a request waits for a copy
	Buffers    int   // buffers held
	Allocs     int64 // buffers allocated from the driver
	Borrows    int64 // requests served by an idle buffer of a larger class
	Trims      int64 // idle buffers freed to make room for another class
	Waits      int64 // requests that waited for a copy
}

// stagingPool hands out pinned buffers and takes them back with the fence
// of the copy that uses them; a buffer is handed out again only once that
// copy has completed. The pinned bytes it holds are bounded by a budget
// shared by all classes, not by a count per class: a request waits for a
// copy only when the budget is spent, so that a transfer (or a run of
// small uploads) queued ahead of the device does not make the host wait
// for the device mid-way. It is safe for concurrent use.
type stagingPool struct {
	mu    sync.Mutex
	drv   hostDriver
	idle  [stageClasses][]*hostBuf // put back, oldest first
	bytes int64                    // pinned bytes held
	waits int64                    // gets that had to wait for a copy
	seq   uint64
	st    StagingStats // Budget, Buffers, Allocs, Borrows, Trims, PeakPinned
}

func newStagingPool(drv hostDriver) *stagingPool {
	return &stagingPool{drv: drv, st: StagingStats{Budget: defaultStageBudget}}
}

// stageClass returns the class of a request of n bytes (0 < n <= maxStage).
func stageClass(n int64) int {
	c := 0
	for int64(1)<<(c+minStageShift) < n {
		c++
	}
	return c
}

func classBytes(c int) int64 { return int64(1) << (c + minStageShift) }

// expect tells the pool that a transfer of total bytes is about to be
// staged: the budget rises to hold two such transfers in flight (this one
// and the previous batch's), up to maxStageBudget. It never falls.
func (s *stagingPool) expect(total int64) {
	want := min(2*ceilDiv(max(total, 0), maxStage)*maxStage, maxStageBudget)
	s.mu.Lock()
	s.st.Budget = max(s.st.Budget, want)
	s.mu.Unlock()
}

// get returns an idle buffer of at least n bytes (0 < n <= maxStage): one
// of its class whose copy has completed, else a new one while the budget
// allows, else a completed one of a larger class, else a new one in place
// of completed buffers of other classes. Only when every buffer that could
// serve is still in use by a copy does it wait, for the oldest of them.
func (s *stagingPool) get(n int64) (*hostBuf, error) {
	if n <= 0 || n > maxStage {
		return nil, fmt.Errorf("cuda: staging: request of %d bytes (1 to %d)", n, maxStage)
	}
	c := stageClass(n)
	size := classBytes(c)
	s.mu.Lock()
	if b := s.takeReadyLocked(c, c); b != nil {
		s.mu.Unlock()
		return s.ready(b), nil
	}
	if s.bytes+size > s.st.Budget {
		if b := s.takeReadyLocked(c+1, stageClasses-1); b != nil {
			s.st.Borrows++
			s.mu.Unlock()
			return s.ready(b), nil
		}
	}
	var trimmed []*hostBuf
	if s.bytes+size > s.st.Budget {
		trimmed = s.trimLocked(s.bytes + size - s.st.Budget)
	}
	if s.bytes+size <= s.st.Budget || !s.hasIdleLocked(c) {
		// Within the budget, or nothing idle could ever serve (the host
		// holds every such buffer): allocate.
		s.bytes += size
		s.st.Buffers++
		s.st.Allocs++
		s.st.PeakPinned = max(s.st.PeakPinned, s.bytes)
		s.mu.Unlock()
		if err := s.free(trimmed); err != nil {
			s.unreserve(size)
			return nil, err
		}
		return s.alloc(c)
	}
	b := s.takeOldestLocked(c)
	s.waits++
	s.mu.Unlock()
	if err := s.free(trimmed); err != nil {
		return nil, err
	}
	if err := s.drv.fenceWait(b.fence); err != nil {
		s.put(b, b.fence)
		return nil, fmt.Errorf("cuda: staging: waiting for a copy: %w", err)
	}
	return s.ready(b), nil
}

// alloc allocates a buffer of class c, already counted in the pool's
// bytes.
func (s *stagingPool) alloc(c int) (*hostBuf, error) {
	size := classBytes(c)
	p, err := s.drv.hostAlloc(size)
	if err != nil {
		s.unreserve(size)
		return nil, fmt.Errorf("cuda: staging: pinned host allocation of %d bytes: %w", size, err)
	}
	return &hostBuf{ptr: p, size: size, class: c}, nil
}

// unreserve uncounts a buffer of size bytes that get counted but did not
// allocate.
func (s *stagingPool) unreserve(size int64) {
	s.mu.Lock()
	s.bytes -= size
	s.st.Buffers--
	s.st.Allocs--
	s.mu.Unlock()
}

// ready releases the fence of a buffer whose copy has completed.
func (s *stagingPool) ready(b *hostBuf) *hostBuf {
	if b.fence != nil {
		s.drv.fenceRelease(b.fence)
		b.fence = nil
	}
	return b
}

// takeReadyLocked removes and returns an idle buffer of a class from lo to
// hi (the smallest class first, the oldest buffer first) whose copy has
// completed, or nil.
func (s *stagingPool) takeReadyLocked(lo, hi int) *hostBuf {
	for c := lo; c <= hi; c++ {
		for i, b := range s.idle[c][:min(len(s.idle[c]), stageScan)] {
			if b.fence == nil || s.drv.fenceDone(b.fence) {
				s.idle[c] = append(s.idle[c][:i], s.idle[c][i+1:]...)
				return b
			}
		}
	}
	return nil
}

// hasIdleLocked reports whether an idle buffer of class c or larger
// exists.
func (s *stagingPool) hasIdleLocked(c int) bool {
	for ; c < stageClasses; c++ {
		if len(s.idle[c]) > 0 {
			return true
		}
	}
	return false
}

// takeOldestLocked removes and returns the idle buffer of class c or
// larger put back first (its copy was queued first), preferring class c
// among buffers put back at the same time. One must exist.
func (s *stagingPool) takeOldestLocked(c int) *hostBuf {
	best := -1
	for k := c; k < stageClasses; k++ {
		if len(s.idle[k]) > 0 && (best < 0 || s.idle[k][0].seq < s.idle[best][0].seq) {
			best = k
		}
	}
	b := s.idle[best][0]
	s.idle[best] = s.idle[best][1:]
	return b
}

// trimLocked removes idle buffers whose copies have completed (of the
// oldest stageScan of each class), smallest classes first, until need bytes are removed or none is left, and
// returns them for free.
func (s *stagingPool) trimLocked(need int64) []*hostBuf {
	var out []*hostBuf
	for c := 0; c < stageClasses && need > 0; c++ {
		keep := s.idle[c][:0]
		for i, b := range s.idle[c] {
			if need > 0 && i < stageScan && (b.fence == nil || s.drv.fenceDone(b.fence)) {
				out = append(out, b)
				need -= b.size
				s.bytes -= b.size
				s.st.Buffers--
				s.st.Trims++
				continue
			}
			keep = append(keep, b)
		}
		clear(s.idle[c][len(keep):])
		s.idle[c] = keep
	}
	return out
}

// free returns trimmed buffers to the driver.
func (s *stagingPool) free(bs []*hostBuf) error {
	for _, b := range bs {
		s.ready(b)
		if err := s.drv.hostFree(b.ptr); err != nil {
			return fmt.Errorf("cuda: staging: freeing a pinned buffer: %w", err)
		}
	}
	return nil
}

// put returns a buffer; f (nil if none) is the copy still using it.
func (s *stagingPool) put(b *hostBuf, f fence) {
	b.fence = f
	s.mu.Lock()
	s.seq++
	b.seq = s.seq
	s.idle[b.class] = append(s.idle[b.class], b)
	s.mu.Unlock()
}

// release waits for every copy and frees every idle buffer (at Close).
func (s *stagingPool) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for c := range s.idle {
		for _, b := range s.idle[c] {
			if b.fence != nil {
				if err := s.drv.fenceWait(b.fence); err != nil && first == nil {
					first = err
				}
				s.drv.fenceRelease(b.fence)
			}
			if err := s.drv.hostFree(b.ptr); err != nil && first == nil {
				first = err
			}
			s.bytes -= b.size
			s.st.Buffers--
		}
		s.idle[c] = nil
	}
	return first
}

// pinnedBytes returns the pinned bytes the pool holds.
func (s *stagingPool) pinnedBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// stats returns a snapshot of the pool's figures.
func (s *stagingPool) stats() StagingStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Pinned, st.Waits = s.bytes, s.waits
	return st
}
