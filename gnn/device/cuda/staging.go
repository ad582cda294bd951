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
	fence fence // the last copy that used it; the buffer is busy until it completes
}

// floats returns the buffer's first n float32s.
func (b *hostBuf) floats(n int) []float32 { return unsafe.Slice((*float32)(b.ptr), n) }

// bytes returns the buffer's first n bytes.
func (b *hostBuf) bytes(n int) []byte { return unsafe.Slice((*byte)(b.ptr), n) }

// Staging buffers come in power-of-two classes from minStage to maxStage
// bytes; larger transfers are split into pieces of maxStage, so the pinned
// memory the device holds stays bounded while copies of consecutive pieces
// overlap the host's filling of the next.
const (
	minStageShift = 16 // 64 KiB
	maxStageShift = 24 // 16 MiB
	maxStage      = 1 << maxStageShift
	stageClasses  = maxStageShift - minStageShift + 1
)

// stageCap is how many buffers a class keeps at most.
func stageCap(class int) int {
	if class+minStageShift <= 20 {
		return 8
	}
	return 4
}

// stagingPool hands out pinned buffers and takes them back with the fence
// of the copy that uses them; a buffer is handed out again only once that
// copy has completed. It is safe for concurrent use.
type stagingPool struct {
	mu    sync.Mutex
	drv   hostDriver
	idle  [stageClasses][]*hostBuf // oldest first
	count [stageClasses]int        // buffers of the class, idle or in use
	bytes int64                    // pinned bytes held
	waits int64                    // gets that had to wait for a copy
}

func newStagingPool(drv hostDriver) *stagingPool { return &stagingPool{drv: drv} }

// stageClass returns the class of a request of n bytes (0 < n <= maxStage).
func stageClass(n int64) int {
	c := 0
	for int64(1)<<(c+minStageShift) < n {
		c++
	}
	return c
}

// get returns an idle buffer of at least n bytes (0 < n <= maxStage),
// allocating one while the class is below its cap and otherwise waiting for
// the oldest buffer's copy.
func (s *stagingPool) get(n int64) (*hostBuf, error) {
	if n <= 0 || n > maxStage {
		return nil, fmt.Errorf("cuda: staging: request of %d bytes (1 to %d)", n, maxStage)
	}
	c := stageClass(n)
	s.mu.Lock()
	for i, b := range s.idle[c] {
		if b.fence == nil || s.drv.fenceDone(b.fence) {
			s.idle[c] = append(s.idle[c][:i], s.idle[c][i+1:]...)
			s.mu.Unlock()
			s.clearFence(b)
			return b, nil
		}
	}
	if s.count[c] < stageCap(c) || len(s.idle[c]) == 0 {
		s.count[c]++
		s.mu.Unlock()
		size := int64(1) << (c + minStageShift)
		p, err := s.drv.hostAlloc(size)
		if err != nil {
			s.mu.Lock()
			s.count[c]--
			s.mu.Unlock()
			return nil, fmt.Errorf("cuda: staging: pinned host allocation of %d bytes: %w", size, err)
		}
		s.mu.Lock()
		s.bytes += size
		s.mu.Unlock()
		return &hostBuf{ptr: p, size: size, class: c}, nil
	}
	b := s.idle[c][0]
	s.idle[c] = s.idle[c][1:]
	s.waits++
	s.mu.Unlock()
	if err := s.drv.fenceWait(b.fence); err != nil {
		return nil, fmt.Errorf("cuda: staging: waiting for a copy: %w", err)
	}
	s.clearFence(b)
	return b, nil
}

func (s *stagingPool) clearFence(b *hostBuf) {
	if b.fence != nil {
		s.drv.fenceRelease(b.fence)
		b.fence = nil
	}
}

// put returns a buffer; f (nil if none) is the copy still using it.
func (s *stagingPool) put(b *hostBuf, f fence) {
	b.fence = f
	s.mu.Lock()
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
			s.count[c]--
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
