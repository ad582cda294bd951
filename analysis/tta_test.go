package analysis

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// accRun is a run of epochs of 10 ms each (after 5 ms of setup), each
// evaluated on the trainer's lane for its last 2 ms, with these
// validation accuracies.
func accRun(name, variant string, accs []float64, status profile.Status) *Run {
	c := profile.LaneCompute
	evs := []profile.Event{runStart(variant, nil, 4), sp(profile.StageSetup, c, 0, 0, 0, 5)}
	evs[0].Run = name
	at := int64(5)
	for i, a := range accs {
		ep := i + 1
		evs = append(evs, trainSpans(c, ep, 0, at, at+8)...)
		evs = append(evs, sp(profile.StageEval, c, ep, 0, at+8, at+10), metric("val_acc", ep, a), metric("test_acc", ep, a-0.1))
		at += 10
	}
	if status != "" {
		evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: status})
	}
	return runOf(evs)
}

func TestTTAReachedAndNot(t *testing.T) {
	runs := []*Run{
		accRun("baseline", "baseline", []float64{0.5, 0.7, 0.80, 0.81}, profile.StatusOK),
		accRun("fast", "optimized", []float64{0.6, 0.805, 0.81}, profile.StatusOK),
		accRun("never", "gas", []float64{0.4, 0.5, 0.6, 0.7}, profile.StatusOK),
	}
	if p := runs[0].Curve[2]; p.Epoch != 3 || !near(p.TimeS, 0.030) || p.ValAcc != 0.80 {
		t.Fatalf("curve point %+v (time from the first touch of data, evaluation included)", p)
	}
	tta := TimeToAccuracy(runs, BaselineIndex(runs, ""), 0)
	if !near(tta.Target, 0.99*0.81) || tta.Baseline != "baseline" {
		t.Fatalf("target %v from %q", tta.Target, tta.Baseline)
	}
	b, f, n := tta.Runs[0], tta.Runs[1], tta.Runs[2]
	if !b.Reached || b.Epoch != 4 || !near(b.TimeS, 0.040) || b.Rank != 2 { // 0.80 < 0.99 × 0.81
		t.Errorf("baseline %+v", b)
	}
	if !b.Reached || !near(b.EpochsSpeedup, 1) {
		t.Errorf("baseline's speedup over epochs %v, want 1", b.EpochsSpeedup)
	}
	if !f.Reached || f.Epoch != 2 || !near(f.Speedup, 2) || !near(f.EpochsSpeedup, 2) || f.Rank != 1 {
		t.Errorf("fast %+v", f)
	}
	if n.Reached || n.Rank != 0 || n.Speedup != 0 || n.EpochsSpeedup != 0 || n.Best != 0.7 {
		t.Errorf("never %+v", n)
	}
	given := TimeToAccuracy(runs, 0, 0.65)
	if !given.Runs[2].Reached || given.Runs[2].Epoch != 4 || given.TargetFrom != "given" {
		t.Errorf("given target: %+v", given)
	}
}

// A run that failed counts as reached only if it reached the target
// before it stopped; the baseline's failure leaves speedups out when it
// never reached the target.
func TestTTAFailedRuns(t *testing.T) {
	runs := []*Run{
		accRun("baseline", "baseline", []float64{0.5, 0.6}, profile.StatusFailed),
		accRun("early", "optimized", []float64{0.9}, profile.StatusOOM),
		accRun("crashed", "pipelined", nil, ""),
	}
	tta := TimeToAccuracy(runs, 0, 0.8)
	if tta.Runs[0].Reached || tta.Runs[0].Status != profile.StatusFailed {
		t.Errorf("baseline %+v", tta.Runs[0])
	}
	if e := tta.Runs[1]; !e.Reached || e.Rank != 1 || e.Speedup != 0 || e.Status != profile.StatusOOM {
		t.Errorf("early %+v", e)
	}
	if c := tta.Runs[2]; c.Reached || c.Evaluated != 0 {
		t.Errorf("crashed %+v", c)
	}
}

// The external client's metric names are read, and a metric without an
// eval span of its epoch is timed by the latest span before it.
func TestTTAMetricNames(t *testing.T) {
	c := profile.LaneCompute
	evs := []profile.Event{runStart("torch", map[string]any{"external": true}, 2)}
	evs = append(evs, trainSpans(c, 0, 0, 0, 10)...)
	evs = append(evs, metric("val_accuracy", 0, 0.7), metric("val_acc", 0, 0.75), metric("valid_acc", 0, 0.1))
	r := runOf(evs)
	if len(r.Curve) != 1 || r.Curve[0].ValAcc != 0.75 || !near(r.Curve[0].TimeS, 0.010) {
		t.Errorf("curve %+v", r.Curve)
	}
}

// With repeats, the target is 99 % of the median of the baseline
// variant's bests, and speedups are against the median of its times.
func TestTTARepeats(t *testing.T) {
	runs := []*Run{
		accRun("baseline.r1", "baseline", []float64{0.5, 0.80}, profile.StatusOK),
		accRun("baseline.r2", "baseline", []float64{0.79, 0.82}, profile.StatusOK),
		accRun("baseline.r3", "baseline", []float64{0.5, 0.6, 0.90}, profile.StatusOK),
		accRun("opt.r1", "optimized", []float64{0.85}, profile.StatusOK),
	}
	tta := TimeToAccuracy(runs, BaselineIndex(runs, ""), 0)
	if !near(tta.Target, 0.99*0.82) || !strings.Contains(tta.TargetFrom, "median over its 3 repeats") {
		t.Fatalf("target %v from %q", tta.Target, tta.TargetFrom)
	}
	// r1 never reached 0.8118; r2 and r3 at 0.020 and 0.030 s: median 0.025
	if o := tta.Runs[3]; !o.Reached || !near(o.Speedup, 2.5) || tta.Runs[0].Reached {
		t.Errorf("optimized %+v", o)
	}
}
