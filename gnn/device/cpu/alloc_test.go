package cpu

import (
	"errors"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
)

func TestAllocAccounting(t *testing.T) {
	const budget = 1000
	d := New(2, budget)
	want := func(step string, live, peak, allocs, frees, ooms int64) {
		t.Helper()
		s := d.Mem().Stats()
		if s.Live != live || s.Peak != peak || s.Allocs != allocs || s.Frees != frees || s.OOMs != ooms || s.Budget != budget {
			t.Fatalf("%s: stats %+v, want live %d peak %d allocs %d frees %d ooms %d", step, s, live, peak, allocs, frees, ooms)
		}
	}
	a := mustAlloc(t, d, 10, 10) // 400
	want("a", 400, 400, 1, 0, 0)
	b := mustAlloc(t, d, 3, 50) // 600: exactly the budget
	want("b", 1000, 1000, 2, 0, 0)
	if _, err := d.Alloc(1, 1); !device.IsOOM(err) {
		t.Fatalf("alloc past the budget: err %v, want OOM", err)
	} else {
		var o *device.OOMError
		if !errors.As(err, &o) || o.Requested != 4 || o.Live != 1000 || o.Budget != budget {
			t.Fatalf("OOM error %+v", o)
		}
	}
	want("oom", 1000, 1000, 2, 0, 1)
	v := a.RowSlice(2, 5)
	d.Free(v) // views release nothing
	want("view", 1000, 1000, 2, 0, 1)
	d.Free(a)
	want("free a", 600, 1000, 2, 1, 1)
	if a.Data != nil {
		t.Fatal("Free left Data set")
	}
	d.Free(a) // double free: ignored
	cp := *b
	d.Free(b)
	d.Free(&cp) // free through a copy of the struct: ignored
	want("double free", 0, 1000, 2, 2, 1)
	d.Free(nil)
	if old := d.Mem().ResetPeak(); old != 1000 {
		t.Fatalf("ResetPeak returned %d", old)
	}
	want("reset", 0, 0, 2, 2, 1)
	z := mustAlloc(t, d, 0, 7) // empty tensors are fine
	want("empty", 0, 0, 3, 2, 1)
	d.Free(z)
	c := mustAlloc(t, d, 25, 10) // 1000: the whole budget again
	want("c", 1000, 1000, 4, 3, 1)
	d.Free(c)
	want("end", 0, 1000, 4, 4, 1)

	// A tensor of another device is not ours to free.
	other := New(1, 0)
	x := mustAlloc(t, other, 2, 2)
	d.Free(x)
	want("foreign", 0, 1000, 4, 4, 1)
	if other.Mem().Stats().Live != 16 || x.Data == nil {
		t.Fatal("freeing through another device touched the tensor")
	}

	if _, err := d.Alloc(-1, 3); err == nil {
		t.Fatal("negative shape accepted")
	}
}

func TestAllocReusesZeroed(t *testing.T) {
	d := New(2, 0)
	x := mustAlloc(t, d, 100, 33)
	for i := range x.Data {
		x.Data[i] = 7
	}
	d.Free(x)
	y := mustAlloc(t, d, 99, 33) // same size class
	for i, v := range y.Data {
		if v != 0 {
			t.Fatalf("recycled buffer not zeroed at %d: %v", i, v)
		}
	}
	if len(y.Data) != 99*33 {
		t.Fatalf("len %d", len(y.Data))
	}
	ps := d.PoolStats()
	if ps.Hits != 1 || ps.Cached != 0 {
		t.Fatalf("pool stats %+v, want one hit and nothing cached", ps)
	}
	if got := d.Mem().Stats().Live; got != 99*33*4 {
		t.Fatalf("live %d, want bytes handed out %d", got, 99*33*4)
	}
	d.Free(y)
	if d.PoolStats().Cached == 0 {
		t.Fatal("freed buffer not cached")
	}
	d.SetPoolLimit(0)
	if d.PoolStats().Cached != 0 {
		t.Fatal("SetPoolLimit(0) kept buffers")
	}
	d.Free(mustAlloc(t, d, 10, 10))
	if d.PoolStats().Cached != 0 {
		t.Fatal("cache past its limit")
	}
}

func TestSizeClass(t *testing.T) {
	prev := 0
	for n := 0; n < 1<<16; n++ {
		c := sizeClass(n)
		if c < n || c < prev || (n > minClass && float64(c) > 1.125*float64(n)+8) {
			t.Fatalf("sizeClass(%d) = %d", n, c)
		}
		if sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d is not a fixed point", c, sizeClass(c))
		}
		prev = c
	}
}

// TestPoolEvictsLeastRecent: a buffer offered to a full pool replaces the
// buffers of the class used least recently, not those of a class in use;
// one larger than a quarter of the limit is not cached.
func TestPoolEvictsLeastRecent(t *testing.T) {
	p := newPool(16384 * 4) // room for four 4096-float buffers
	var as, bs [][]float32
	for range 3 {
		a, _ := p.get(4096)
		as = append(as, a)
	}
	for range 2 {
		b, _ := p.get(2048)
		bs = append(bs, b)
	}
	c, _ := p.get(1024)
	for _, x := range append(as, bs...) {
		p.put(x)
	}
	if p.cached != 16384*4 {
		t.Fatalf("cached %d, want the pool full", p.cached)
	}
	x, _ := p.get(4096) // class 4096 is now the most recent
	p.put(x)
	p.put(c) // over the limit: class 2048, the oldest, goes
	if len(p.free[4096]) != 3 || len(p.free[2048]) != 0 || len(p.free[1024]) != 1 {
		t.Fatalf("classes hold %d, %d, %d buffers; want 3, 0, 1", len(p.free[4096]), len(p.free[2048]), len(p.free[1024]))
	}
	if p.cached != (3*4096+1024)*4 {
		t.Fatalf("cached %d", p.cached)
	}
	big, _ := p.get(8192) // over a quarter of the limit
	p.put(big)
	if len(p.free[8192]) != 0 || len(p.free[4096]) != 3 {
		t.Fatal("a buffer over a quarter of the limit was cached or evicted others")
	}
}
