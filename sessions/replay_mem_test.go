package sessions

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// heapInuse returns HeapInuse after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// replayRetained opens a replay of the journal at path (n events) and
// returns the heap bytes it retains per event once opened, and once every
// event was delivered (as a finished session's dashboard leaves it: seeked
// to the end and drained). Delivered events are dropped at once.
func replayRetained(tb testing.TB, path string, n int) (opened, drained float64) {
	tb.Helper()
	before := heapInuse()
	r, err := OpenReplay(path, ReplayOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if r.Len() != n {
		tb.Fatalf("replay of %d events, want %d", r.Len(), n)
	}
	perEvent := func() float64 {
		after := heapInuse()
		if after < before {
			return 0
		}
		return float64(after-before) / float64(n)
	}
	opened = perEvent()
	r.Seek(r.Duration())
	for {
		_, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	if r.Delivered() != n {
		tb.Fatalf("delivered %d of %d", r.Delivered(), n)
	}
	drained = perEvent()
	runtime.KeepAlive(r)
	return opened, drained
}

// TestReplayRetainedMemory checks that a replay does not hold its events:
// a journal-backed replay keeps well under the ~430 bytes of a decoded
// profile.Event per event, before and after delivering them.
func TestReplayRetainedMemory(t *testing.T) {
	const n = 100_000
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if got := writeSyntheticJournal(t, path, n); got != n {
		t.Fatalf("wrote %d events", got)
	}
	opened, drained := replayRetained(t, path, n)
	t.Logf("retained per event: %.1f B opened, %.1f B drained", opened, drained)
	const limit = 32
	if opened > limit || drained > limit {
		t.Errorf("replay retains %.1f B per event opened, %.1f B drained; want at most %d", opened, drained, limit)
	}
}

// BenchmarkReplayRetained1M reports the heap a replay of a journal of
// 1,000,000 events retains per event (HeapInuse after GC, against the heap
// before opening it): "open-B/event" once opened, "drained-B/event" once
// every event was delivered.
func BenchmarkReplayRetained1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "1m.jsonl")
	if got := writeSyntheticJournal(b, path, n); got != n {
		b.Fatalf("wrote %d events", got)
	}
	var opened, drained float64
	for b.Loop() {
		o, d := replayRetained(b, path, n)
		opened, drained = max(opened, o), max(drained, d)
	}
	b.ReportMetric(opened, "open-B/event")
	b.ReportMetric(drained, "drained-B/event")
}
