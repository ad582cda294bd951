package runstate

import (
	"testing"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
)

// TestAnswersLive: the answers follow the events as they come, are kept
// while no event comes, and judge what the run did so far.
func TestAnswersLive(t *testing.T) {
	r := NewRun("base")
	if r.Answers() != nil {
		t.Fatal("answers before any event")
	}
	c := profile.LaneCompute
	const ms = int64(1e6)
	add := func(name string, epoch int, start, end int64) {
		r.Add(&profile.Event{T: profile.TypeSpan, Name: name, Lane: c, Epoch: epoch, Start: start * ms, Dur: (end - start) * ms})
	}
	r.Add(&profile.Event{T: profile.TypeRunStart, V: 1, Run: "base", Variant: "baseline", Config: []byte(`{"sampler_workers":0}`)})
	add(profile.StageSample, 1, 0, 80)
	add(profile.StageTrain, 1, 80, 100)
	a := r.Answers()
	if a == nil || a.Run.Verdict.Kind != analysis.VerdictBound || a.Run.Verdict.First != analysis.Sample {
		t.Fatalf("answers %+v", a)
	}
	if r.Answers() != a {
		t.Error("answers recomputed without a new event")
	}
	add(profile.StageTrain, 2, 100, 400)
	b := r.Answers()
	if b == a || b.Run.Verdict.First != analysis.Train {
		t.Errorf("after a long training span: verdict %+v", b.Run.Verdict)
	}
	fired := false
	for _, ad := range a.Advice {
		fired = fired || (ad.Rule == analysis.RuleSampling && ad.Fired)
	}
	if !fired {
		t.Errorf("sampling-bound run without the sampling advice: %+v", a.Advice)
	}
}
