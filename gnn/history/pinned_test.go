package history

import (
	"slices"
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// pinnedDev is a CPU device that pretends to have pinned host memory and
// asynchronous copies: it counts the calls the history makes, so that the
// tests see which path a push takes and that host access waits first.
type pinnedDev struct {
	*cpu.Device
	mu       sync.Mutex
	allocs   int
	frees    int
	scatters int
	syncs    int
}

func (p *pinnedDev) AllocPinned(n int) ([]float32, error) {
	p.mu.Lock()
	p.allocs++
	p.mu.Unlock()
	return make([]float32, n), nil
}

func (p *pinnedDev) FreePinned([]float32) {
	p.mu.Lock()
	p.frees++
	p.mu.Unlock()
}

func (p *pinnedDev) ScatterToHost(dst []float32, src *tensor.Tensor, idx []int32) {
	p.mu.Lock()
	p.scatters++
	p.mu.Unlock()
	c := src.Cols
	for i, r := range idx {
		copy(dst[int(r)*c:(int(r)+1)*c], src.Data[i*c:(i+1)*c])
	}
}

func (p *pinnedDev) SyncPinned() {
	p.mu.Lock()
	p.syncs++
	p.mu.Unlock()
}

// Sync is the device-wide wait, which the history must never need: host
// access to the table waits for the pinned-memory work alone.
func (p *pinnedDev) Sync() { panic("history waited for the whole device") }

var _ device.PinnedHost = (*pinnedDev)(nil)

func TestNewOnPlainDevice(t *testing.T) {
	h, err := NewOn(newDev(), 4, 3)
	if err != nil || h.Pinned() {
		t.Fatalf("NewOn on the CPU device: pinned %v, %v", h != nil && h.Pinned(), err)
	}
	h.Close() // a no-op
	if _, err := NewOn(&pinnedDev{Device: newDev()}, 0, 3); err == nil {
		t.Fatal("zero nodes must be an error")
	}
}

// TestPinnedHistory runs pushes, pulls and refreshes through a pinned
// history seen through a scoped view: distinct pushes go to ScatterToHost,
// a push with a repeated node takes the staged path (last row wins), and
// every host access of the table waits for the device first.
func TestPinnedHistory(t *testing.T) {
	p := &pinnedDev{Device: newDev()}
	view := device.Scoped(p, device.NewScope())
	h, err := NewOn(view, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Pinned() || p.allocs != 1 {
		t.Fatalf("pinned %v, %d allocations", h.Pinned(), p.allocs)
	}
	src := devTensor(t, p.Device, 3, 2, []float32{1, 2, 3, 4, 5, 6})
	if err := h.Push(view, src, []int32{4, 0, 2}, 1); err != nil {
		t.Fatal(err)
	}
	if p.scatters != 1 || p.syncs != 0 {
		t.Fatalf("distinct push: %d scatters, %d syncs", p.scatters, p.syncs)
	}
	if err := h.Push(view, src, []int32{1, 3, 1}, 2); err != nil {
		t.Fatal(err)
	}
	if p.scatters != 1 || p.syncs != 1 {
		t.Fatalf("push with a repeat: %d scatters, %d syncs", p.scatters, p.syncs)
	}
	got := pullAll(t, p.Device, h)
	want := []float32{3, 4, 5, 6, 5, 6, 3, 4, 1, 2}
	if !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	if h.LastPush(4) != 1 || h.LastPush(1) != 2 {
		t.Fatal("push steps")
	}
	if _, err := h.RefreshHost(make([]float32, 10), 3); err != nil {
		t.Fatal(err)
	}
	if p.syncs != 2 {
		t.Fatalf("refresh did not wait for the device (%d syncs)", p.syncs)
	}
	h.Reset()
	h.Close()
	h.Close()
	if p.syncs != 4 || p.frees != 1 {
		t.Fatalf("reset and close: %d syncs, %d frees", p.syncs, p.frees)
	}
}
