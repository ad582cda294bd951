package whatif

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// BenchmarkBuildAndPredict streams the events of a run of 200 epochs of
// 100 batches (about 100,000 events) into a builder and predicts one
// scenario: memory grows with the batches, not the events.
func BenchmarkBuildAndPredict(b *testing.B) {
	j := journal{cpus: 2, threads: 2, epochs: 200, batches: 100, sample: 3 * ms, transfer: ms, step: 5 * ms, gap: ms / 10, eval: 20 * ms}
	evs := j.events()
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder()
		for i := range evs {
			bl.Add(&evs[i])
		}
		e := NewModel(bl.Trace()).Predict(Scenario{Workers: 2, Prefetch: 4, OverlapEval: true})
		if e.EpochS <= 0 {
			b.Fatal("no prediction")
		}
	}
	b.ReportMetric(float64(len(evs)), "events/op")
	_ = profile.StageTrain
}
