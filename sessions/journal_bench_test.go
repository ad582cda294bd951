package sessions

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// writeSyntheticJournal writes a journal of about n events with the mix a
// pipelined run writes: per batch sample (with attrs) and transfer spans
// on a sampler lane, wait, train, forward, backward and step spans on
// compute, a batch_loss metric and, every other batch, a mem event; per
// epoch an eval span and loss/val_acc/test_acc metrics; run_start first and
// run_end last. It returns the number of events written.
func writeSyntheticJournal(tb testing.TB, path string, n int) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	count := 0
	put := func(e *profile.Event) {
		if count >= n-1 && e.T != profile.TypeRunEnd {
			return // leave room for run_end only
		}
		line = profile.AppendLine(line[:0], e)
		if _, err := w.Write(line); err != nil {
			tb.Fatal(err)
		}
		count++
	}
	h := profile.Host{CPU: "synthetic", Cores: 2}
	put(&profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "optimized", Session: "bench",
		Variant: "optimized", Config: json.RawMessage(`{"model":"sage","epochs":100,"sampler_workers":2,"prefetch":4,"overlap_eval":true}`),
		Host: &h, Wall: "2026-11-22T15:30:45.123456789Z"})
	const batches = 1000
	var at int64
	attrs := profile.Attrs(profile.Attr{Key: "nodes", Value: 24576}, profile.Attr{Key: "edges", Value: 311040})
	for epoch := 1; count < n-1; epoch++ {
		for b := 0; b < batches && count < n-1; b++ {
			lane := profile.SamplerLane(b % 2)
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageSample, Lane: lane, Epoch: epoch, Batch: b, Start: at, Dur: 2_100_000, Attrs: attrs})
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageTransfer, Lane: lane, Epoch: epoch, Batch: b, Start: at + 2_100_000, Dur: 400_000})
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageWait, Lane: profile.LaneCompute, Epoch: epoch, Batch: b, Start: at + 2_500_000, Dur: 12_345})
			t0 := at + 2_512_345
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: epoch, Batch: b, Start: t0, Dur: 3_000_000})
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageForward, Lane: profile.LaneCompute, Epoch: epoch, Batch: b, Start: t0, Dur: 1_200_000})
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageBackward, Lane: profile.LaneCompute, Epoch: epoch, Batch: b, Start: t0 + 1_200_000, Dur: 1_600_000})
			put(&profile.Event{T: profile.TypeSpan, Name: profile.StageStep, Lane: profile.LaneCompute, Epoch: epoch, Batch: b, Start: t0 + 2_800_000, Dur: 200_000})
			put(&profile.Event{T: profile.TypeMetric, Name: "batch_loss", Epoch: epoch, Batch: b, Value: 1.0 / float64(epoch*batches+b+1)})
			if b%2 == 0 {
				peak := int64(300<<20 + (b*7919)%(64<<20))
				put(&profile.Event{T: profile.TypeMem, Epoch: epoch, Batch: b, Phase: profile.PhaseTrain, Peak: peak, Live: peak / 2, Budget: 1 << 30, Predicted: peak + 4096})
			}
			at += 3_100_000
		}
		put(&profile.Event{T: profile.TypeSpan, Name: profile.StageEval, Lane: profile.LaneEval, Epoch: epoch, Batch: -1, Start: at - 50_000_000, Dur: 80_000_000})
		put(&profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: epoch, Batch: -1, Value: 0.5 / float64(epoch)})
		put(&profile.Event{T: profile.TypeMetric, Name: "val_acc", Epoch: epoch, Batch: -1, Value: 0.8})
		put(&profile.Event{T: profile.TypeMetric, Name: "test_acc", Epoch: epoch, Batch: -1, Value: 0.79})
	}
	put(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK, Summary: json.RawMessage(`{"test_acc":0.79,"val_acc":0.8,"best_epoch":3}`)})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return count
}

// BenchmarkLoad1M measures loading and aggregating a journal of 1,000,000
// events (generated once): "summarize" streams it through SummarizeJournal
// (what compare does; events are never held), "read+aggregate" loads every
// event with ReadJournal and aggregates the slice. Besides time and
// allocations it reports the journal's size and the heap in use right
// after loading (heap-MB), the figure that bounds the resident size.
func BenchmarkLoad1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "1m.jsonl")
	if got := writeSyntheticJournal(b, path, n); got != n {
		b.Fatalf("wrote %d events", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	heapMB := func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	b.Run("summarize", func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		var heap float64
		for b.Loop() {
			js, err := SummarizeJournal(path)
			if err != nil || js.Read.Events != n || js.Summary.Events != n {
				b.Fatal(js.Read, err)
			}
			heap = max(heap, heapMB())
		}
		b.ReportMetric(heap, "heap-MB")
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	})
	b.Run("read+aggregate", func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		var heap float64
		for b.Loop() {
			evs, st, err := ReadJournal(path)
			if err != nil || len(evs) != n {
				b.Fatal(st, err)
			}
			s := profile.Summarize(evs)
			if s.Events != n {
				b.Fatal(s.Events)
			}
			heap = max(heap, heapMB())
			runtime.KeepAlive(evs)
		}
		b.ReportMetric(heap, "heap-MB")
	})
}
