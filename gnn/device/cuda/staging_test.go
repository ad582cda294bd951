package cuda

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestStageClass(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want int
	}{{1, 0}, {64 << 10, 0}, {64<<10 + 1, 1}, {1 << 20, 4}, {maxStage, stageClasses - 1}} {
		if got := stageClass(c.n); got != c.want {
			t.Errorf("stageClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestStagingReuseAfterFence checks that a buffer is handed out again only
// after the copy that used it completed, that the class cap makes a get
// wait for the oldest copy, and that release frees everything.
func TestStagingReuseAfterFence(t *testing.T) {
	f := newFakeDriver(0)
	s := newStagingPool(f)
	class := stageClass(8 << 20)
	cap := stageCap(class)
	var bufs []*hostBuf
	var fences []*fakeFence
	for i := 0; i < cap; i++ {
		b, err := s.get(8 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if b.size != 8<<20 || len(b.floats(10)) != 10 || len(b.bytes(40)) != 40 {
			t.Fatalf("buffer of %d bytes", b.size)
		}
		// The byte and float views share the buffer.
		binary.LittleEndian.PutUint32(b.bytes(8)[4:], math.Float32bits(1.5))
		if b.floats(2)[1] != 1.5 {
			t.Fatalf("float view reads %v where the byte view wrote 1.5", b.floats(2)[1])
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		fe := &fakeFence{}
		fences = append(fences, fe)
		s.put(b, fe)
	}
	// Every copy in flight and the class at its cap: the oldest is waited for.
	b, err := s.get(5 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if b != bufs[0] || f.waited != 1 || s.waits != 1 {
		t.Fatalf("got buffer %p (want the oldest %p), waited %d", b, bufs[0], f.waited)
	}
	if f.released[fences[0]] != 1 {
		t.Fatal("the waited fence was not released")
	}
	// A completed copy frees its buffer without waiting.
	fences[2].done = true
	b2, _ := s.get(8 << 20)
	if b2 != bufs[2] || f.waited != 1 {
		t.Fatal("a buffer whose copy completed must be reused at once")
	}
	s.put(b, nil)
	s.put(b2, nil)
	if s.pinnedBytes() != int64(cap)*(8<<20) {
		t.Fatalf("pinned %d", s.pinnedBytes())
	}
	if err := s.release(); err != nil {
		t.Fatal(err)
	}
	if s.pinnedBytes() != 0 || len(f.host) != 0 {
		t.Fatalf("after release: %d pinned, %d host buffers", s.pinnedBytes(), len(f.host))
	}
	if _, err := s.get(maxStage + 1); err == nil {
		t.Fatal("a request beyond the largest class must be an error")
	}
	f.failHost = true
	if _, err := s.get(100); err == nil {
		t.Fatal("a failing pinned allocation must be an error")
	}
}
