package cpu

import (
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
)

// TestScopeExact runs a scripted sequence through a scoped view while other
// goroutines allocate on the same device: the scope's live and peak count
// only its own tensors, exactly, and the allocator's budget still applies.
func TestScopeExact(t *testing.T) {
	d := New(1, 1<<20)
	s := device.NewScope()
	sd := device.Scoped(d, s)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if x, err := d.Alloc(16, 16); err == nil {
					d.Free(x)
				}
			}
		}()
	}
	a, err := sd.Alloc(10, 10) // 400
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sd.Alloc(5, 20) // 400: live 800
	sd.Free(a)              // 400
	c, _ := sd.Alloc(1, 50) // 600
	sd.Free(b.RowSlice(0, 1))
	sd.Free(b) // 200
	sd.Free(b) // double free: ignored
	other, _ := d.Alloc(3, 3)
	sd.Free(other) // not the scope's: freed, never counted
	close(stop)
	wg.Wait()
	if s.Live() != 200 || s.Peak() != 800 {
		t.Fatalf("scope live %d peak %d, want 200 and 800", s.Live(), s.Peak())
	}
	if p := s.ResetPeak(); p != 800 || s.Peak() != 200 {
		t.Fatalf("reset peak: %d then %d", p, s.Peak())
	}
	sd.Free(c)
	if st := d.Mem().Stats(); st.Live != 0 {
		t.Fatalf("device live %d after freeing everything", st.Live)
	}
	// The budget applies through the view: exactly 1 MiB fits, one more
	// float does not.
	x, err := sd.Alloc(1<<18, 1)
	if err != nil {
		t.Fatalf("alloc of exactly the budget: %v", err)
	}
	if _, err := sd.Alloc(1, 1); !device.IsOOM(err) {
		t.Fatalf("alloc past the budget: %v", err)
	}
	if s.Live() != 1<<20 {
		t.Fatalf("failed alloc counted: live %d", s.Live())
	}
	sd.Free(x)
}
