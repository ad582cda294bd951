package cuda

import "testing"

func TestAnchorHostAndMs(t *testing.T) {
	if h, s := anchorHost(100, 120); h != 110 || s != 10 {
		t.Fatalf("anchorHost = %d, %d", h, s)
	}
	if msToNs(1.5) != 1_500_000 || msToNs(-0.0005) != -500 {
		t.Fatal("msToNs")
	}
}

// TestEventClockMapsAndRenews maps events through anchors on a host clock
// that runs alongside a fake device clock, renews the anchor, and releases
// every anchor event once no mark uses it.
func TestEventClockMapsAndRenews(t *testing.T) {
	f := newFakeDriver(0)
	host := int64(1_000_000) // ns
	now := func() int64 { return host }
	c := newEventClock(f, now, 5_000_000_000)
	f.devNow = 50 // device ms at the anchor
	a, err := c.acquire()
	if err != nil {
		t.Fatal(err)
	}
	if a.host != 1_000_000 || f.anchors != 1 {
		t.Fatalf("anchor %+v", a)
	}
	// An event 2.5 ms of device time after the anchor.
	ev := &fakeFence{done: true, ms: 52.5}
	got, err := c.hostTime(a, ev)
	if err != nil || got != 1_000_000+2_500_000 {
		t.Fatalf("hostTime = %d, %v", got, err)
	}
	// Not yet old enough: no renewal.
	host += 1_000_000_000
	if err := c.maybeRenew(); err != nil || f.anchors != 1 {
		t.Fatalf("renewed too early (%d anchors)", f.anchors)
	}
	// Old: renewed; the old anchor stays alive while a mark uses it.
	host += 5_000_000_000
	f.devNow = 6050
	if err := c.maybeRenew(); err != nil || f.anchors != 2 {
		t.Fatalf("not renewed (%d anchors)", f.anchors)
	}
	old := a.ev.(*fakeFence)
	if f.released[old] != 0 {
		t.Fatal("an anchor was released while a mark uses it")
	}
	b, _ := c.acquire()
	if b == a || b.host != host {
		t.Fatal("a new mark must use the new anchor")
	}
	// The same event through either anchor maps to nearly the same time.
	ev2 := &fakeFence{done: true, ms: 6051}
	t1, _ := c.hostTime(a, ev2)
	t2, _ := c.hostTime(b, ev2)
	if d := t1 - t2; d < -1000 || d > 1000 {
		t.Fatalf("anchors disagree by %d ns", d)
	}
	c.release(a)
	if f.released[old] != 1 {
		t.Fatal("the old anchor was not released after its last mark")
	}
	bev := b.ev.(*fakeFence)
	c.release(b)
	if f.released[bev] != 0 {
		t.Fatal("the current anchor was released while current")
	}
	c.close()
	if f.released[bev] != 1 {
		t.Fatal("close did not release the current anchor exactly once")
	}
	if len(f.released) != 2 {
		t.Fatalf("%d anchor events released, want 2", len(f.released))
	}
	// A new clock on another host clock renews at once.
	if err := c.setNow(func() int64 { return 42 }); err != nil {
		t.Fatal(err)
	}
	if c.cur == nil || c.cur.host != 42 {
		t.Fatal("setNow must anchor on the new clock")
	}
}
