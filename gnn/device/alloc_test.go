package device

import (
	"fmt"
	"testing"
)

// TestAllocatorScript checks exact accounting over a scripted sequence,
// with the budget refusing exactly the first byte past it.
func TestAllocatorScript(t *testing.T) {
	a := NewAllocator(100)
	steps := []struct {
		op         string
		n          int64
		live, peak int64
		oom        bool
	}{
		{"reserve", 40, 40, 40, false},
		{"reserve", 60, 100, 100, false}, // exactly at the budget: allowed
		{"reserve", 1, 100, 100, true},   // one byte past: refused, unchanged
		{"release", 30, 70, 100, false},
		{"reserve", 30, 100, 100, false},
		{"release", 100, 0, 100, false},
		{"reset", 0, 0, 0, false},
		{"reserve", 10, 10, 10, false},
	}
	for i, s := range steps {
		var err error
		switch s.op {
		case "reserve":
			err = a.Reserve(s.n)
		case "release":
			a.Release(s.n)
		case "reset":
			a.ResetPeak()
		}
		if (err != nil) != s.oom || (err != nil && !IsOOM(err)) {
			t.Fatalf("step %d (%s %d): err %v, want oom=%v", i, s.op, s.n, err, s.oom)
		}
		st := a.Stats()
		if st.Live != s.live || st.Peak != s.peak {
			t.Fatalf("step %d (%s %d): live %d peak %d, want %d %d", i, s.op, s.n, st.Live, st.Peak, s.live, s.peak)
		}
	}
	st := a.Stats()
	if st.OOMs != 1 || st.Allocs != 4 || st.Frees != 2 {
		t.Fatalf("counts %+v", st)
	}
	var o *OOMError
	err := a.Reserve(1000)
	if !IsOOM(fmt.Errorf("wrapped: %w", err)) {
		t.Fatal("IsOOM must see through wrapping")
	}
	o = err.(*OOMError)
	if o.Requested != 1000 || o.Live != 10 || o.Budget != 100 {
		t.Fatalf("oom %+v", o)
	}
	if a.Reserve(-1) == nil {
		t.Fatal("a negative reservation must be an error")
	}
	a.SetBudget(0)
	if err := a.Reserve(1 << 40); err != nil {
		t.Fatalf("no budget: %v", err)
	}
}

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind Kind
		n    int
		ok   bool
	}{
		{"", KindCPU, 0, true}, {"cpu", KindCPU, 0, true}, {" CUDA ", KindCUDA, 0, true},
		{"cuda:3", KindCUDA, 3, true}, {"cuda:", "", 0, false}, {"cuda:-1", "", 0, false},
		{"cuda:x", "", 0, false}, {"gpu", "", 0, false}, {"cpu:1", "", 0, false},
	} {
		kind, n, err := ParseName(c.in)
		if (err == nil) != c.ok || kind != c.kind || n != c.n {
			t.Errorf("ParseName(%q) = %q, %d, %v", c.in, kind, n, err)
		}
	}
}
