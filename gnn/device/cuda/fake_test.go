package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// fakeDriver stands in for the CUDA driver in the allocator, staging and
// clock tests: device memory is a counter with a capacity, fences are
// flags the test completes, host memory is Go memory.
type fakeDriver struct {
	mu        sync.Mutex
	capacity  int64
	used      int64
	next      uintptr
	live      map[uintptr]int64
	allocs    int
	frees     int
	syncs     int
	released  map[*fakeFence]int
	waited    int
	host      map[unsafe.Pointer][]byte
	hostFrees int
	failHost  bool
	failFree  bool // hostFree fails

	// clock: device time of each anchor and event, in ms
	devNow  float64
	anchors int
}

type fakeFence struct {
	done bool
	ms   float64 // device time of the event (clock tests)
}

var errFakeOOM = errors.New("fake: out of memory")

func newFakeDriver(capacity int64) *fakeDriver {
	return &fakeDriver{capacity: capacity, next: 1 << 20, live: map[uintptr]int64{}, released: map[*fakeFence]int{}, host: map[unsafe.Pointer][]byte{}}
}

func (f *fakeDriver) memAlloc(n int64) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+n > f.capacity {
		return 0, errFakeOOM
	}
	p := f.next
	f.next += uintptr(n) + 4096
	f.live[p] = n
	f.used += n
	f.allocs++
	return p, nil
}

func (f *fakeDriver) memFree(p uintptr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.live[p]
	if !ok {
		return fmt.Errorf("fake: free of unknown %#x", p)
	}
	delete(f.live, p)
	f.used -= n
	f.frees++
	return nil
}

func (f *fakeDriver) isOOM(err error) bool { return errors.Is(err, errFakeOOM) }

func (f *fakeDriver) fenceDone(x fence) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return x.(*fakeFence).done
}

func (f *fakeDriver) fenceWait(x fence) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	x.(*fakeFence).done = true
	f.waited++
	return nil
}

func (f *fakeDriver) fenceRelease(x fence) {
	f.mu.Lock()
	f.released[x.(*fakeFence)]++
	f.mu.Unlock()
}

func (f *fakeDriver) syncAll() error {
	f.mu.Lock()
	f.syncs++
	f.mu.Unlock()
	return nil
}

func (f *fakeDriver) hostAlloc(n int64) (unsafe.Pointer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failHost {
		return nil, errors.New("fake: no pinned memory")
	}
	b := make([]byte, n)
	p := unsafe.Pointer(&b[0])
	f.host[p] = b
	return p, nil
}

func (f *fakeDriver) hostFree(p unsafe.Pointer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.host[p]; !ok {
		return errors.New("fake: free of unknown host memory")
	}
	if f.failFree {
		return errors.New("fake: freeing pinned memory failed")
	}
	delete(f.host, p)
	f.hostFrees++
	return nil
}

func (f *fakeDriver) anchorEvent(now func() int64) (fence, int64, int64, error) {
	before := now()
	f.mu.Lock()
	f.anchors++
	ev := &fakeFence{done: true, ms: f.devNow}
	f.mu.Unlock()
	return ev, before, now(), nil
}

func (f *fakeDriver) elapsedMs(from, to fence) (float64, error) {
	return to.(*fakeFence).ms - from.(*fakeFence).ms, nil
}

func (f *fakeDriver) releaseEvent(ev fence) { f.fenceRelease(ev) }

// complete marks a fence done, as the device does when the work before it
// has run.
func (f *fakeDriver) complete(x *fakeFence) {
	f.mu.Lock()
	x.done = true
	f.mu.Unlock()
}
