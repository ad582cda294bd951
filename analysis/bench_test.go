package analysis

import (
	"flag"
	"runtime"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// benchEvents sizes the synthetic journal of BenchmarkStream; the issue's
// figure is 10 million (-analysis.events 10000000).
var benchEvents = flag.Int("analysis.events", 1_000_000, "events in BenchmarkStream's synthetic journal")

// synthJournal calls fn with n events of a pipelined run (two sampler
// workers, overlapped evaluation, a feature cache), 1000 batches an
// epoch, generated as they are needed so that only the analysis holds
// memory.
func synthJournal(n int, fn func(e *profile.Event)) {
	const perEpoch = 1000
	e := profile.Event{T: profile.TypeRunStart, V: 1, Run: "bench", Variant: "optimized",
		Config: []byte(`{"sampler_workers":2,"overlap_eval":true,"cache_bytes":"20%"}`), Host: &profile.Host{Cores: 8}}
	fn(&e)
	sent := 1
	var ev profile.Event // one event reused, so that the generator allocates nothing
	emit := func() {
		if sent < n {
			fn(&ev)
			sent++
		}
	}
	span := func(name, lane string, epoch, batch int, start, dur int64) {
		ev = profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: epoch, Batch: batch, Start: start, Dur: dur}
		emit()
	}
	var at int64
	for epoch := 1; sent < n; epoch++ {
		for b := 0; b < perEpoch && sent < n; b++ {
			w := profile.SamplerLane(b % 2)
			span(profile.StageSample, w, epoch, b, at-4000, 3000)
			span(profile.StageCache, w, epoch, b, at-1000, 300)
			span(profile.StageTransfer, w, epoch, b, at-1000, 800)
			span(profile.StageWait, profile.LaneCompute, epoch, b, at, 200)
			span(profile.StageForward, profile.LaneCompute, epoch, b, at+200, 1000)
			span(profile.StageBackward, profile.LaneCompute, epoch, b, at+1200, 1000)
			span(profile.StageStep, profile.LaneCompute, epoch, b, at+2200, 300)
			span(profile.StageTrain, profile.LaneCompute, epoch, b, at+200, 2100)
			ev = profile.Event{T: profile.TypeMem, Epoch: epoch, Batch: b, Peak: 1 << 20}
			emit()
			ev = profile.Event{T: profile.TypeCache, Epoch: epoch, Batch: b, Hits: 10, Misses: 5}
			emit()
			ev = profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: epoch, Batch: b, Value: 1}
			emit()
			at += 2500
		}
		span(profile.StageEval, profile.LaneEval, epoch, 0, at, 500_000)
		ev = profile.Event{T: profile.TypeMetric, Name: "val_acc", Epoch: epoch, Batch: -1, Value: 0.5}
		emit()
	}
}

// BenchmarkStream analyses a synthetic journal of -analysis.events
// events per iteration and reports the peak heap in use while it does.
func BenchmarkStream(b *testing.B) {
	b.ReportAllocs()
	var peak uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	for b.Loop() {
		rb := NewRunBuilder()
		i := 0
		synthJournal(*benchEvents, func(e *profile.Event) {
			rb.Add(e)
			if i++; i%100_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		})
		r := rb.Run()
		if r.Ledger.Whole.WallS <= 0 {
			b.Fatal("no wall time")
		}
	}
	b.ReportMetric(float64(*benchEvents), "events/op")
	if peak > base {
		b.ReportMetric(float64(peak-base)/(1<<20), "peak-heap-MiB")
	}
}

// The synthetic journal's ledger holds the identity too (a small one).
func TestSynthJournalSums(t *testing.T) {
	rb := NewRunBuilder()
	synthJournal(30_000, rb.Add)
	r := rb.Run()
	checkLedgerSums(t, &r.Ledger)
	if r.Verdict.First != Train || len(r.Ledger.Epochs) < 2 {
		t.Errorf("verdict %+v, %d epochs", r.Verdict, len(r.Ledger.Epochs))
	}
}
