package devcheck

import (
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestCompareCPU checks the CPU backend against itself with another thread
// count: every operation must pass, and the exact ones bit for bit.
func TestCompareCPU(t *testing.T) {
	res, err := Compare(cpu.New(3, 0), cpu.New(1, 0), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 40 {
		t.Fatalf("only %d results", len(res))
	}
	for _, r := range res {
		if !r.OK {
			t.Errorf("%s %s: max relative error %g, %d mismatches", r.Op, r.Shape, r.MaxRelErr, r.Mismatches)
		}
	}
}

func TestBenchCPU(t *testing.T) {
	res, err := Bench(cpu.New(2, 0), 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 7 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Iters < 1 || r.Seconds <= 0 || r.Rate <= 0 {
			t.Fatalf("%+v", r)
		}
	}
}

func TestMemoryCPU(t *testing.T) {
	dev := cpu.New(1, 0)
	rep, err := Memory(dev, 64<<20, func() (int64, error) { return 123, nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.AllocatorPeak < 32<<20 || rep.AllocatorPeak > 64<<20 || rep.ProcessBefore != 123 || rep.PoolReserved != -1 {
		t.Fatalf("%+v", rep)
	}
	if st := dev.Mem().Stats(); st.Live != 0 {
		t.Fatalf("%d bytes left live", st.Live)
	}
}

// bookDev is a CPU device that keeps fake books, to check how Memory
// reads them.
type bookDev struct {
	*cpu.Device
	emptied int
}

func (b *bookDev) Books() device.Books {
	return device.Books{Reserved: b.Mem().Stats().Peak + 1000, Allocated: 10, Cached: 20, PinnedHost: 5}
}

func (b *bookDev) EmptyCache() error { b.emptied++; return nil }

// TestMemoryBooks checks that the pattern starts from an emptied cache and
// that the remainder outside the allocator is NVML's figure less the
// reservation.
func TestMemoryBooks(t *testing.T) {
	dev := &bookDev{Device: cpu.New(1, 0)}
	rep, err := Memory(dev, 16<<20, func() (int64, error) { return 1 << 30, nil })
	if err != nil {
		t.Fatal(err)
	}
	if dev.emptied != 1 || rep.Books == nil || rep.Books.Cached != 20 {
		t.Fatalf("emptied %d times, books %+v", dev.emptied, rep.Books)
	}
	if want := int64(1<<30) - rep.Books.Reserved; rep.OutsideAllocator != want {
		t.Fatalf("outside the allocator %d, want %d", rep.OutsideAllocator, want)
	}
	plain, err := Memory(cpu.New(1, 0), 16<<20, nil)
	if err != nil || plain.Books != nil || plain.OutsideAllocator != -1 {
		t.Fatalf("without books or NVML: %+v, %v", plain, err)
	}
}
