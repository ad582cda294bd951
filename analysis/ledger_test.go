package analysis

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// The baseline schedule: everything in turn on the trainer's lane, with
// gaps between spans.
func TestLedgerSequential(t *testing.T) {
	c := profile.LaneCompute
	evs := []profile.Event{
		sp(profile.StageSetup, c, 0, 0, 0, 10),
		sp(profile.StageSample, c, 1, 0, 10, 20),
		sp(profile.StageCache, c, 1, 0, 21, 23),
		sp(profile.StageTransfer, c, 1, 0, 20, 25),
	}
	evs = append(evs, trainSpans(c, 1, 0, 25, 45)...)
	evs = append(evs, sp(profile.StageEval, c, 1, 0, 47, 57)) // gap 45..47
	l := ledgerOf(evs)
	w := &l.Whole
	want := map[Category]float64{Sample: 0.010, Transfer: 0.005, Train: 0.020, Eval: 0.010, Other: 0.010, Idle: 0.002}
	for cat, v := range want {
		if !near(w.Exposed[cat], v) {
			t.Errorf("%s exposed %.6f, want %.6f", cat, w.Exposed[cat], v)
		}
		if cat != Idle && !near(w.Busy[cat], v) {
			t.Errorf("%s busy %.6f, want %.6f", cat, w.Busy[cat], v)
		}
	}
	if !near(w.WallS, 0.057) || !near(w.CacheBusyS, 0.002) || !near(w.CacheExposedS, 0.002) {
		t.Errorf("wall %.6f cache %.6f/%.6f", w.WallS, w.CacheBusyS, w.CacheExposedS)
	}
	if !near(l.Setup.WallS, 0.010) || len(l.Epochs) != 1 || !near(l.Epochs[0].WallS, 0.047) {
		t.Errorf("setup %.6f, epochs %+v", l.Setup.WallS, l.Epochs)
	}
	if !near(w.TrainerIdleS, 0.002) {
		t.Errorf("trainer idle %.6f, want 0.002", w.TrainerIdleS)
	}
	checkLedgerSums(t, &l)
	tr := l.Training()
	if !near(tr.WallS, 0.047) || !near(tr.StartS, 0.010) || tr.Exposed[Other] != 0 || !near(tr.Exposed[Sample], 0.010) {
		t.Errorf("training window %+v", tr)
	}
	checkSum(t, "training", &tr)
}

// Sampler workers: the trainer waits while a worker samples and
// transfers; sampling under training is hidden.
func TestLedgerPipelined(t *testing.T) {
	c, w0, w1 := profile.LaneCompute, profile.SamplerLane(0), profile.SamplerLane(1)
	evs := []profile.Event{
		sp(profile.StageSample, w0, 1, 0, 0, 20),
		sp(profile.StageSample, w1, 1, 1, 0, 30),
		sp(profile.StageTransfer, w0, 1, 0, 20, 30),
		sp(profile.StageWait, c, 1, 0, 0, 30),
		sp(profile.StageTransfer, w1, 1, 1, 30, 40),
		sp(profile.StageSample, w0, 1, 2, 30, 60),
	}
	evs = append(evs, trainSpans(c, 1, 0, 30, 60)...)
	evs = append(evs, sp(profile.StageWait, c, 1, 1, 60, 60))
	evs = append(evs, trainSpans(c, 1, 1, 60, 90)...)
	l := ledgerOf(evs)
	w := &l.Whole
	// 0..20: two samplers; 20..30: one samples, one transfers (split).
	if !near(w.Exposed[Sample], 0.025) || !near(w.Exposed[Transfer], 0.005) || !near(w.Exposed[Train], 0.060) {
		t.Errorf("exposed sample %.6f transfer %.6f train %.6f", w.Exposed[Sample], w.Exposed[Transfer], w.Exposed[Train])
	}
	if !near(w.Busy[Sample], 0.060) || !near(w.Hidden(Sample), 0.035) {
		t.Errorf("sample busy %.6f hidden %.6f", w.Busy[Sample], w.Hidden(Sample))
	}
	if !near(w.TrainerIdleS, 0.030) {
		t.Errorf("trainer idle %.6f, want 0.030 (its wait)", w.TrainerIdleS)
	}
	checkLedgerSums(t, &l)
}

// Overlapped evaluation: epoch 1's evaluation runs beside epoch 2's
// training (hidden); the last one runs alone (exposed); the trainer's
// wait for device memory held by evaluation is evaluation's.
func TestLedgerOverlappedEval(t *testing.T) {
	c, e := profile.LaneCompute, profile.LaneEval
	var evs []profile.Event
	evs = append(evs, trainSpans(c, 1, 0, 0, 10)...)
	evs = append(evs, sp(profile.StageMemWait, c, 2, 0, 10, 14))
	evs = append(evs, trainSpans(c, 2, 0, 14, 24)...)
	evs = append(evs, sp(profile.StageEval, e, 1, 0, 10, 20))
	evs = append(evs, sp(profile.StageEval, e, 2, 0, 24, 34))
	l := ledgerOf(evs)
	w := &l.Whole
	if !near(w.Exposed[Eval], 0.014) || !near(w.Busy[Eval], 0.020) || !near(w.Exposed[Train], 0.020) {
		t.Errorf("eval exposed %.6f busy %.6f, train %.6f", w.Exposed[Eval], w.Busy[Eval], w.Exposed[Train])
	}
	if len(l.Epochs) != 2 || !near(l.Epochs[0].WallS, 0.020) || !near(l.Epochs[1].WallS, 0.014) {
		t.Errorf("epochs %+v", l.Epochs)
	}
	checkLedgerSums(t, &l)
}

// Ranks: each rank gets its ledger; the slowest rank is the run's and
// the straggler.
func TestLedgerRanks(t *testing.T) {
	r0, r1 := profile.RankLane(0, profile.LaneCompute), profile.RankLane(1, profile.LaneCompute)
	var evs []profile.Event
	evs = append(evs, sp(profile.StageSample, r0, 1, 0, 0, 10))
	evs = append(evs, trainSpans(r0, 1, 0, 10, 20)...)
	evs = append(evs, sp(profile.StageSample, r1, 1, 0, 0, 5))
	evs = append(evs, trainSpans(r1, 1, 0, 5, 35)...)
	evs = append(evs, trainSpans(r1, 1, 1, 35, 45)...)
	l := ledgerOf(evs)
	if len(l.Ranks) != 2 || l.Ranks[1].Rank != 1 {
		t.Fatalf("ranks %+v", l.Ranks)
	}
	if !near(l.Whole.WallS, 0.045) || !near(l.Ranks[0].Whole.WallS, 0.020) {
		t.Errorf("wall %.6f, rank 0 %.6f", l.Whole.WallS, l.Ranks[0].Whole.WallS)
	}
	s := l.Straggler
	if s == nil || s.Rank != 1 || !near(s.TrainS, 0.040) || !near(s.MedianTrain, 0.025) || !near(s.Share, 0.015/0.045) {
		t.Errorf("straggler %+v", s)
	}
	for _, r := range l.Ranks {
		checkSum(t, "rank", &r.Whole)
	}
}

// Epochs are swept as the trainer moves on: the spans kept stay those of
// a few epochs, and the figures are those of the whole journal.
func TestLedgerStreamsEpochs(t *testing.T) {
	c, s0 := profile.LaneCompute, profile.SamplerLane(0)
	b := NewLedgerBuilder()
	b.keep = 0 // sweep as soon as an epoch can close
	var at int64
	maxPending := 0
	for ep := 1; ep <= 50; ep++ { // 120 spans an epoch
		for i := 0; i < 20; i++ {
			evs := []profile.Event{sp(profile.StageSample, s0, ep, i, at, at+3), sp(profile.StageWait, c, ep, i, at, at+2)}
			evs = append(evs, trainSpans(c, ep, i, at+2, at+6)...)
			for k := range evs {
				b.Add(&evs[k])
			}
			at += 6
			maxPending = max(maxPending, len(b.tracks[0].pending))
		}
	}
	if maxPending > 3*20*6 {
		t.Errorf("kept up to %d spans for epochs of 120", maxPending)
	}
	l := b.Ledger()
	if len(l.Epochs) != 50 || !near(l.Whole.WallS, float64(at)/1e3) {
		t.Fatalf("%d epochs, wall %.6f", len(l.Epochs), l.Whole.WallS)
	}
	// per batch: 2 ms exposed sampling (1 ms of it hidden under training), 4 ms train
	if !near(l.Whole.Exposed[Sample], 1.0*2/6*float64(at)/1e3) || !near(l.Whole.Hidden(Sample), 1.0) {
		t.Errorf("sample exposed %.6f hidden %.6f", l.Whole.Exposed[Sample], l.Whole.Hidden(Sample))
	}
	checkLedgerSums(t, &l)
}

// A span that arrives after its window was swept is clipped and counted.
func TestLedgerLateSpan(t *testing.T) {
	c := profile.LaneCompute
	var evs []profile.Event
	for ep := 1; ep <= 3; ep++ {
		evs = append(evs, trainSpans(c, ep, 0, int64(ep-1)*10, int64(ep)*10)...)
	}
	evs = append(evs, sp(profile.StageSample, profile.SamplerLane(0), 1, 1, 5, 25))
	b := NewLedgerBuilder()
	b.keep = 0
	for i := range evs {
		b.Add(&evs[i])
	}
	l := b.Ledger()
	// epoch 1 (0..10 ms) was swept when epoch 3 began
	if !near(l.LateS, 0.005) || !near(l.Whole.WallS, 0.030) {
		t.Errorf("late %.6f wall %.6f", l.LateS, l.Whole.WallS)
	}
	checkLedgerSums(t, &l)
}

// Device spans give the device's busy time; a device-side step that
// outlasts its host-side span (an asynchronous backend) hides the host's
// sampling of the next batch.
func TestLedgerDevice(t *testing.T) {
	c := profile.LaneCompute
	evs := trainSpans(c, 1, 0, 0, 10)
	evs = append(evs, sp(profile.StageGPUTransfer, profile.LaneGPUCopy, 1, 0, 0, 1), sp(profile.StageGPUTrain, profile.LaneGPUCompute, 1, 0, 2, 14))
	evs = append(evs, sp(profile.StageSample, c, 1, 1, 10, 16))
	evs = append(evs, trainSpans(c, 1, 1, 16, 20)...)
	l := ledgerOf(evs)
	w := &l.Whole
	if !w.Device || !near(w.DeviceBusyS, 0.013) || !near(w.Exposed[Train], 0.018) || !near(w.Exposed[Sample], 0.002) || !near(w.Hidden(Sample), 0.004) {
		t.Errorf("device %v %.6f, train %.6f, sample %.6f hidden %.6f", w.Device, w.DeviceBusyS, w.Exposed[Train], w.Exposed[Sample], w.Hidden(Sample))
	}
	checkLedgerSums(t, &l)
}

func TestLedgerEmpty(t *testing.T) {
	l := ledgerOf(nil)
	if l.Whole.WallS != 0 || len(l.Epochs) != 0 {
		t.Errorf("%+v", l)
	}
	v := VerdictOf(&l.Whole, false)
	if v.Kind != VerdictNone {
		t.Errorf("verdict %+v", v)
	}
}

// A hostile journal's extreme times are clamped: nothing overflows.
func TestLedgerExtremeTimes(t *testing.T) {
	c := profile.LaneCompute
	evs := []profile.Event{
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: c, Epoch: 1, Start: math.MinInt64, Dur: math.MaxInt64},
		{T: profile.TypeSpan, Name: profile.StageSample, Lane: c, Epoch: 1, Start: math.MaxInt64 - 5, Dur: math.MaxInt64},
		{T: profile.TypeSpan, Name: profile.StageEval, Lane: c, Epoch: 2, Start: 10, Dur: -5},
	}
	l := ledgerOf(evs)
	if l.Whole.WallS <= 0 || math.IsInf(l.Whole.WallS, 0) {
		t.Fatalf("wall %v", l.Whole.WallS)
	}
	checkLedgerSums(t, &l)
}

// Small epochs are kept until enough spans are held: a sampler worker's
// span of a later epoch that started early still lands in its window.
func TestLedgerKeepsSmallEpochs(t *testing.T) {
	c := profile.LaneCompute
	var evs []profile.Event
	for ep := 1; ep <= 5; ep++ {
		evs = append(evs, trainSpans(c, ep, 0, int64(ep-1)*10, int64(ep)*10)...)
	}
	evs = append(evs, sp(profile.StageSample, profile.SamplerLane(0), 6, 0, 5, 45))
	l := ledgerOf(evs)
	if l.LateS != 0 || !near(l.Whole.Busy[Sample], 0.040) || !near(l.Whole.Hidden(Sample), 0.040) {
		t.Errorf("late %.6f, sample busy %.6f hidden %.6f", l.LateS, l.Whole.Busy[Sample], l.Whole.Hidden(Sample))
	}
	checkLedgerSums(t, &l)
}

// A PyTorch DataLoader's workers record on loader/N lanes: their spans
// are the run's data loading, whatever they are named, and load hidden
// under training or exposed while the main process waits.
func TestLedgerLoaderLanes(t *testing.T) {
	c, l0 := profile.LaneCompute, "loader/0"
	evs := []profile.Event{
		sp("collate", l0, 1, 0, 0, 10),
		sp(profile.StageWait, c, 1, 0, 0, 10),
		sp("fetch", l0, 1, 1, 10, 20),
	}
	evs = append(evs, trainSpans(c, 1, 0, 10, 20)...)
	evs = append(evs, sp(profile.StageSetup, l0, 1, 1, 20, 25)) // a named stage keeps its class
	evs = append(evs, sp(profile.StageWait, c, 1, 1, 20, 25))
	l := ledgerOf(evs)
	w := &l.Whole
	if !near(w.Busy[Sample], 0.020) || !near(w.Exposed[Sample], 0.010) || !near(w.Exposed[Train], 0.010) || !near(w.Exposed[Other], 0.005) {
		t.Errorf("busy %v exposed %v", w.Busy, w.Exposed)
	}
	checkLedgerSums(t, &l)
}
