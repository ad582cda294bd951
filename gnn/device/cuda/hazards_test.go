package cuda

import (
	"slices"
	"sync"
	"testing"
)

// TestHazardsWriteAfterRead is the regression test of a write on one side
// stream overtaking a read of the same buffer on another: a writer must
// wait for every pending read, a reader only for the pending write.
func TestHazardsWriteAfterRead(t *testing.T) {
	var h hazards
	if h.forSide(true) != nil || h.takeAll() != nil {
		t.Fatal("a fresh buffer has no hazards")
	}
	h.addRead("read-1") // e.g. CopyToHost into pinned memory on the history stream
	h.addRead("read-2")
	if got := h.forSide(true); !slices.Equal(got, []fence{"read-1", "read-2"}) {
		t.Fatalf("a writer waits for %v, want both reads", got)
	}
	if got := h.forSide(false); len(got) != 0 {
		t.Fatalf("a reader after reads waits for %v, want nothing", got)
	}
	if old := h.setWrite("write-1"); old != nil {
		t.Fatalf("first write replaced %v", old)
	}
	if got := h.forSide(false); !slices.Equal(got, []fence{"write-1"}) {
		t.Fatalf("a reader waits for %v, want the write", got)
	}
	if got := h.forSide(true); !slices.Equal(got, []fence{"write-1", "read-1", "read-2"}) {
		t.Fatalf("a second writer waits for %v", got)
	}
	if old := h.setWrite("write-2"); old != "write-1" {
		t.Fatalf("the second write replaced %v, want write-1", old)
	}
	if got := h.takeAll(); !slices.Equal(got, []fence{"read-1", "read-2", "write-2"}) {
		t.Fatalf("compute waits for %v", got)
	}
	if h.forSide(true) != nil || h.takeAll() != nil {
		t.Fatal("after compute waited, nothing is pending")
	}
}

// TestHazardsConcurrent records and takes fences from several goroutines
// (run with -race): every fence recorded is taken exactly once.
func TestHazardsConcurrent(t *testing.T) {
	var h hazards
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := map[fence]int{}
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				h.addRead([2]int{g, i})
				_ = h.forSide(true)
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				fs := h.takeAll()
				mu.Lock()
				for _, f := range fs {
					taken[f]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, f := range h.takeAll() {
		taken[f]++
	}
	if len(taken) != 800 {
		t.Fatalf("%d distinct fences taken, want 800", len(taken))
	}
	for f, n := range taken {
		if n != 1 {
			t.Fatalf("fence %v taken %d times", f, n)
		}
	}
}
