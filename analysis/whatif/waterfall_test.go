package whatif

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile/stats"
)

// reps makes n repeats of a variant whose repeat k has epochs of s × the
// k-th drift factor.
func reps(s float64, drift ...float64) []stats.Repeat {
	out := make([]stats.Repeat, len(drift))
	for i, d := range drift {
		out[i] = stats.Repeat{K: i + 1, Epochs: []float64{s * d, s * d, s * d}}
	}
	return out
}

func TestWaterfallMeasuredPartsAndInteraction(t *testing.T) {
	drift := []float64{1, 1.1, 0.9}
	base := reps(1.0, drift...)
	w, err := NewWaterfall(base, reps(0.5, drift...), []PartInput{
		{Name: "pipelined", Runs: reps(0.8, drift...)},
		{Name: "overlap-eval", Runs: reps(0.8, drift...)},
	})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "total", w.Total.Speedup, 2)
	near(t, "pipelined", w.Parts[0].Speedup, 1.25)
	near(t, "overlap-eval", w.Parts[1].Speedup, 1.25)
	// ln 2 − 2 ln 1.25: the parts alone give 1.5625×, together 2×
	near(t, "interaction", w.Interaction.Log, math.Log(2)-2*math.Log(1.25))
	near(t, "interaction factor", w.Interaction.Speedup, 2/1.5625)
	near(t, "sum", w.Sum(), w.Total.Log)
	if err := w.Check(); err != nil {
		t.Error(err)
	}
	if w.Parts[0].Predicted || w.Parts[0].Repeats != 3 || w.Total.Lo <= 0 {
		t.Errorf("pipelined %+v, total %+v", w.Parts[0], w.Total)
	}
	// Every repeat has the same ratios: the interval is a point.
	near(t, "interaction lo", w.Interaction.Lo, w.Interaction.Speedup)
	near(t, "interaction hi", w.Interaction.Hi, w.Interaction.Speedup)
	near(t, "baseline s", w.BaselineS, 1)
	near(t, "optimized s", w.OptimizedS, 0.5)
}

// A part the session did not run alone is predicted and marked so; one
// neither measured nor predicted is left in the interaction, which then
// has no interval.
func TestWaterfallPredictedAndUnknownParts(t *testing.T) {
	base := reps(1.0, 1, 1, 1)
	w, err := NewWaterfall(base, reps(0.6, 1, 1, 1), []PartInput{
		{Name: "pipelined", Predicted: 1.2, Lo: 1.1, Hi: 1.3},
		{Name: "mem-guard"},
		{Name: "cache", Runs: reps(1.25, 1, 1, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, g, c := w.Parts[0], w.Parts[1], w.Parts[2]
	if !p.Predicted || p.Lo != 1.1 || p.Hi != 1.3 {
		t.Errorf("pipelined %+v", p)
	}
	if !g.Unknown || g.Log != 0 {
		t.Errorf("mem-guard %+v", g)
	}
	near(t, "cache (a slowdown)", c.Speedup, 0.8)
	near(t, "interaction", w.Interaction.Log, math.Log(1/0.6)-math.Log(1.2)-math.Log(0.8))
	if err := w.Check(); err != nil {
		t.Error(err)
	}
	if w.Interaction.Lo != 0 || w.Interaction.Hi != 0 {
		t.Errorf("interaction interval %v..%v with an unknown part", w.Interaction.Lo, w.Interaction.Hi)
	}
}

func TestWaterfallNeedsEpochs(t *testing.T) {
	if _, err := NewWaterfall(nil, reps(1, 1), nil); err == nil {
		t.Error("no baseline epochs gave no error")
	}
	if _, err := NewWaterfall(reps(1, 1), []stats.Repeat{{K: 1}}, nil); err == nil {
		t.Error("no optimized epochs gave no error")
	}
}

// Parts predicted from crafted baseline runs: a sampling-bound run whose
// pipeline on one worker saves a quarter of each batch.
func TestPredictPart(t *testing.T) {
	tr := journal{cpus: 2, threads: 1, epochs: 3, batches: 10, sample: 30 * ms, step: 10 * ms}.trace()
	p := PredictPart("pipelined", []*Trace{tr, tr}, Scenario{Workers: 1, Prefetch: 1})
	near(t, "predicted", p.Predicted, 0.4/0.3)
	near(t, "lo", p.Lo, p.Hi)
	if got := Repeats([]*Trace{tr}); len(got) != 1 || got[0].K != 1 || len(got[0].Epochs) != 3 {
		t.Errorf("repeats %+v", got)
	}
}

// A session's waterfall from runs: the pipeline measured, the overlapped
// evaluation predicted from the baseline's runs.
func TestSessionWaterfall(t *testing.T) {
	base := journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 100 * ms, eval: 50 * ms}.trace()
	opt := journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 80 * ms, eval: 20 * ms}.trace()
	pipe := journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 100 * ms, eval: 25 * ms}.trace()
	w, err := SessionWaterfall([]*Trace{base}, []*Trace{opt}, []PartSpec{
		{Name: "pipelined", Runs: []*Trace{pipe}},
		{Name: "overlap-eval", Scenario: Scenario{OverlapEval: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "total", w.Total.Speedup, 1.5)
	near(t, "pipelined", w.Parts[0].Speedup, 1.2)
	// epochs 150, 100, 100 ms overlapped: median 100 against 150
	near(t, "overlap-eval", w.Parts[1].Speedup, 1.5)
	if !w.Parts[1].Predicted || w.Parts[0].Predicted {
		t.Errorf("parts %+v", w.Parts)
	}
	near(t, "interaction", w.Interaction.Speedup, 1.5/1.2/1.5)
	if err := w.Check(); err != nil {
		t.Error(err)
	}
}

func TestWaterfallBars(t *testing.T) {
	base := reps(1.0, 1)
	w, err := NewWaterfall(base, reps(0.5, 1), []PartInput{{Name: "a", Runs: reps(0.8, 1)}, {Name: "b", Predicted: 1.6}})
	if err != nil {
		t.Fatal(err)
	}
	bars := w.Bars()
	if len(bars) != 4 || bars[2].Name != "interaction" || !bars[3].Total {
		t.Fatalf("bars %+v", bars)
	}
	near(t, "a to", bars[0].To, 1.25)
	near(t, "b from", bars[1].From, 1.25)
	near(t, "b to", bars[1].To, 2)
	// the parts alone reach 2×, as the total: no interaction
	near(t, "interaction", bars[2].To/bars[2].From, 1)
	near(t, "interaction ends at the total", bars[2].To, bars[3].To)
}
