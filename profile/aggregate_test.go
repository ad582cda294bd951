package profile

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

const ms = int64(1e6)

func span(name, lane string, epoch, batch int, from, to int64) Event {
	return Event{T: TypeSpan, Name: name, Lane: lane, Epoch: epoch, Batch: batch, Start: from * ms, Dur: (to - from) * ms}
}

func runStart(cores int) Event {
	e := Event{T: TypeRunStart, V: SchemaVersion, Run: "r", Variant: "v"}
	if cores > 0 {
		e.Host = &Host{Cores: cores}
	}
	return e
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// Baseline: everything on the trainer, one after the other.
func TestSummaryBaselineSequential(t *testing.T) {
	evs := []Event{
		runStart(4),
		span(StageSample, LaneCompute, 0, 0, 0, 10),
		span(StageTransfer, LaneCompute, 0, 0, 10, 15),
		span(StageTrain, LaneCompute, 0, 0, 15, 45),
		span(StageForward, LaneCompute, 0, 0, 15, 25),
		span(StageBackward, LaneCompute, 0, 0, 25, 40),
		span(StageStep, LaneCompute, 0, 0, 40, 45),
		{T: TypeMetric, Name: "loss", Epoch: 0, Batch: 0, Value: 2.0},
		{T: TypeMem, Epoch: 0, Batch: 0, Peak: 900, Budget: 1000},
		span(StageSample, LaneCompute, 0, 1, 45, 55),
		span(StageTransfer, LaneCompute, 0, 1, 55, 60),
		span(StageTrain, LaneCompute, 0, 1, 60, 90),
		{T: TypeMetric, Name: "loss", Epoch: 0, Batch: 1, Value: 1.5},
		{T: TypeMem, Epoch: 0, Batch: 1, Peak: 950, Budget: 1000},
		span(StageEval, LaneCompute, 0, -1, 90, 110),
		{T: TypeMetric, Name: "val_acc", Epoch: 0, Batch: -1, Value: 0.6},
		{T: TypeRunEnd, Status: StatusOK},
	}
	s := Summarize(evs)
	near(t, "wall", s.WallS, 0.110)
	near(t, "sample", s.Stage(StageSample), 0.020)
	near(t, "transfer", s.Stage(StageTransfer), 0.010)
	near(t, "train", s.Stage(StageTrain), 0.060)
	near(t, "forward", s.Stage(StageForward), 0.010)
	near(t, "backward", s.Stage(StageBackward), 0.015)
	near(t, "step", s.Stage(StageStep), 0.005)
	near(t, "eval", s.Stage(StageEval), 0.020)
	near(t, "data wait", s.DataWaitS, 0.030)
	near(t, "T_stages", s.StagesS, 0.110)
	near(t, "overlap", s.Overlap, 1.0)
	near(t, "T_serial", s.SerialS, 0.060) // max(train 60, eval 20)
	near(t, "ideal", s.IdealS, 0.060)     // max(60, 110/4)
	near(t, "efficiency", s.Efficiency, 60.0/110)
	if len(s.Epochs) != 1 || s.Epochs[0].Batches != 2 {
		t.Fatalf("epochs %+v", s.Epochs)
	}
	near(t, "epoch 0", s.Epochs[0].WallS, 0.110) // first span 0 .. its eval's end 110
	if s.Status != StatusOK || s.Cores != 4 || s.Batches != 2 || s.PeakBytes != 950 || s.BudgetBytes != 1000 {
		t.Errorf("summary %+v", s)
	}
	if s.Metrics["loss"] != 1.5 || s.Metrics["val_acc"] != 0.6 {
		t.Errorf("metrics %v", s.Metrics)
	}
	if s.Counts[TypeSpan] != 10 || s.Counts[TypeMetric] != 3 || s.Counts[TypeMem] != 2 || s.Events != int64(len(evs)) {
		t.Errorf("counts %v", s.Counts)
	}
	near(t, "lane compute", s.Lanes[LaneCompute], 0.110)
}

// Pipelined: two sampler workers and a copy stream feed the trainer; the
// samplers start epoch 1 before epoch 0 finishes.
func pipelined(cores int) []Event {
	return []Event{
		runStart(cores),
		span(StageSample, SamplerLane(0), 0, 0, 0, 20),
		span(StageSample, SamplerLane(1), 0, 1, 0, 20),
		span(StageWait, LaneCompute, 0, 0, 0, 25),
		span(StageTransfer, LaneCopy, 0, 0, 20, 25),
		span(StageSample, SamplerLane(0), 0, 2, 20, 40),
		span(StageSample, SamplerLane(1), 0, 3, 20, 40),
		span(StageTrain, LaneCompute, 0, 0, 25, 45),
		span(StageTransfer, LaneCopy, 0, 1, 40, 45),
		span(StageTrain, LaneCompute, 0, 1, 45, 65),
		span(StageTransfer, LaneCopy, 0, 2, 60, 65),
		span(StageTrain, LaneCompute, 0, 2, 65, 85),
		span(StageTransfer, LaneCopy, 0, 3, 80, 85),
		span(StageSample, SamplerLane(0), 1, 0, 90, 110),
		span(StageTrain, LaneCompute, 0, 3, 85, 105),
		span(StageWait, LaneCompute, 1, 0, 105, 115),
		span(StageTransfer, LaneCopy, 1, 0, 110, 115),
		span(StageTrain, LaneCompute, 1, 0, 115, 135),
	}
}

func TestSummaryPipelined(t *testing.T) {
	s := Summarize(pipelined(2))
	near(t, "wall", s.WallS, 0.135)
	near(t, "sample", s.Stage(StageSample), 0.100)
	near(t, "transfer", s.Stage(StageTransfer), 0.025)
	near(t, "train", s.Stage(StageTrain), 0.100)
	near(t, "wait", s.Stage(StageWait), 0.035)
	near(t, "data wait", s.DataWaitS, 0.035) // only the wait spans
	near(t, "T_stages", s.StagesS, 0.225)
	near(t, "overlap", s.Overlap, 225.0/135)
	near(t, "T_serial", s.SerialS, 0.100)
	near(t, "ideal", s.IdealS, 0.1125) // max(100, 225/2)
	near(t, "efficiency", s.Efficiency, 112.5/135)
	near(t, "lane sampler/0", s.Lanes[SamplerLane(0)], 0.060)
	near(t, "lane copy", s.Lanes[LaneCopy], 0.025)
	near(t, "lane compute", s.Lanes[LaneCompute], 0.100)
	if len(s.Epochs) != 2 {
		t.Fatalf("epochs %+v", s.Epochs)
	}
	near(t, "epoch 0", s.Epochs[0].WallS, 0.105) // 0 .. its last train end 105
	near(t, "epoch 1", s.Epochs[1].WallS, 0.030) // 105 .. 135, though its sampling began at 90
	st := s.EpochStats
	if st.N != 2 {
		t.Fatalf("stats %+v", st)
	}
	near(t, "mean", st.MeanS, 0.0675)
	near(t, "median", st.MedianS, 0.0675)
	near(t, "min", st.MinS, 0.030)
	near(t, "max", st.MaxS, 0.105)
	near(t, "std", st.StdS, math.Sqrt(2*0.0375*0.0375))

	// without host cores, C = 1 and the ideal exceeds the wall: clamped
	s1 := Summarize(pipelined(0))
	if s1.Cores != 1 || s1.Efficiency != 1 {
		t.Errorf("C=1: cores %d efficiency %v", s1.Cores, s1.Efficiency)
	}
}

// Overlapped eval: epoch e's evaluation runs on its own lane while epoch
// e+1 trains.
func TestSummaryOverlappedEval(t *testing.T) {
	evs := []Event{
		runStart(8),
		span(StageSample, SamplerLane(0), 0, 0, 0, 10),
		span(StageWait, LaneCompute, 0, 0, 0, 10),
		span(StageTrain, LaneCompute, 0, 0, 10, 40),
		span(StageSample, SamplerLane(0), 1, 0, 40, 50),
		span(StageEval, LaneEval, 0, -1, 40, 70),
		span(StageWait, LaneCompute, 1, 0, 40, 50),
		span(StageTrain, LaneCompute, 1, 0, 50, 80),
		span(StageEval, LaneEval, 1, -1, 80, 110),
	}
	s := Summarize(evs)
	near(t, "wall", s.WallS, 0.110)
	near(t, "T_stages", s.StagesS, 0.140)
	near(t, "overlap", s.Overlap, 140.0/110)
	near(t, "data wait", s.DataWaitS, 0.020)
	near(t, "T_serial", s.SerialS, 0.060) // max(train 60, eval 60)
	near(t, "ideal", s.IdealS, 0.060)     // max(60, 140/8)
	near(t, "efficiency", s.Efficiency, 60.0/110)
	if len(s.Epochs) != 2 {
		t.Fatalf("epochs %+v", s.Epochs)
	}
	near(t, "epoch 0", s.Epochs[0].WallS, 0.070) // 0 .. its eval's end 70 (after its last train at 40)
	near(t, "epoch 1", s.Epochs[1].WallS, 0.040) // 70 .. its eval's end 110
	near(t, "std", s.EpochStats.StdS, math.Sqrt(2*0.015*0.015))
	near(t, "lane eval", s.Lanes[LaneEval], 0.060)
	if s.Status != "" {
		t.Errorf("status %q without run_end", s.Status)
	}
}

// Summary can be taken at any point; feeding the rest later gives the same
// result as aggregating everything at once (live tail == finished journal).
func TestAggregatorIncremental(t *testing.T) {
	evs := append(pipelined(2),
		Event{T: TypeStale, Mean: 1, Max: 3}, Event{T: TypeStale, Mean: 2, Max: 5},
		Event{T: TypeGuard, Action: ActionSplit}, Event{T: TypeGuard, Action: ActionCut},
		Event{T: TypeOOM, Action: ActionAbort}, Event{T: TypeRunEnd, Status: StatusOOM, Error: "x"})
	a := NewAggregator()
	for i, e := range evs {
		a.Add(e)
		if i%3 == 0 {
			_ = a.Summary()
		}
	}
	got, want := a.Summary(), Summarize(evs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("incremental differs:\n%+v\n%+v", got, want)
	}
	if got.StaleMean != 1.5 || got.StaleMax != 5 || got.Counts[TypeOOM] != 1 || got.Counts[TypeGuard] != 2 || got.Status != StatusOOM || got.Error != "x" {
		t.Errorf("summary %+v", got)
	}
	// JSON round trip of the summary
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, got) {
		t.Errorf("summary JSON round trip: %v\n%+v\n%+v", err, back, got)
	}
}

func TestSummaryEmpty(t *testing.T) {
	s := NewAggregator().Summary()
	if s.WallS != 0 || s.Efficiency != 0 || s.Overlap != 0 || s.Cores != 1 || s.Epochs == nil || s.EpochStats.N != 0 {
		t.Errorf("empty summary %+v", s)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
}

// A setup span before the first epoch counts in the wall time but not in
// the first epoch's time.
func TestSummarySetupOutsideEpochs(t *testing.T) {
	evs := []Event{
		runStart(2),
		span(StageSetup, LaneCompute, 0, 0, 0, 50),
		span(StageSample, LaneCompute, 1, 0, 50, 60),
		span(StageTrain, LaneCompute, 1, 0, 60, 80),
		span(StageEval, LaneCompute, 1, 0, 80, 100),
	}
	s := Summarize(evs)
	near(t, "wall", s.WallS, 0.100)
	if len(s.Epochs) != 1 {
		t.Fatalf("epochs %+v", s.Epochs)
	}
	near(t, "epoch 1", s.Epochs[0].WallS, 0.050) // 50 .. 100
	near(t, "setup", s.Stage(StageSetup), 0.050)
}

func TestSpread(t *testing.T) {
	w := []float64{3, 1, 2}
	if got, want := Spread(w), (EpochStats{N: 3, MeanS: 2, MinS: 1, MedianS: 2, MaxS: 3, StdS: 1}); got != want {
		t.Errorf("odd: %+v, want %+v", got, want)
	}
	if w[0] != 3 || w[1] != 1 {
		t.Errorf("Spread sorted its argument: %v", w)
	}
	if got := Spread([]float64{4, 1, 2, 3}); got.MedianS != 2.5 || got.MeanS != 2.5 {
		t.Errorf("even: %+v", got)
	}
	if got := Spread([]float64{5}); got != (EpochStats{N: 1, MeanS: 5, MinS: 5, MedianS: 5, MaxS: 5}) {
		t.Errorf("one: %+v", got)
	}
	if got := Spread(nil); got != (EpochStats{}) {
		t.Errorf("none: %+v", got)
	}
}

// Three ranks of a distributed run, merged: rank 1 starts 5 ms late and
// is slower in epoch 2; rank 2 is the median.
func TestSummaryDistributedSlowestRank(t *testing.T) {
	r := func(rank int, lane string) string { return RankLane(rank, lane) }
	evs := []Event{
		{T: TypeRunStart, V: SchemaVersion, Run: "ddp", Rank: 0, World: 3},
		// rank 0: epochs of 40 and 40 ms
		span(StageSample, r(0, LaneCompute), 1, 0, 0, 10),
		span(StageTrain, r(0, LaneCompute), 1, 0, 10, 40),
		span(StageTrain, r(0, LaneCompute), 2, 0, 40, 80),
		// rank 1: starts at 5 ms; epochs of 40 and 70 ms
		span(StageSample, r(1, LaneCompute), 1, 0, 5, 15),
		span(StageTrain, r(1, LaneCompute), 1, 0, 15, 45),
		span(StageTrain, r(1, LaneCompute), 2, 0, 45, 115),
		// rank 2: epochs of 45 and 50 ms
		span(StageTrain, r(2, LaneCompute), 1, 0, 0, 45),
		span(StageTrain, r(2, LaneCompute), 2, 0, 45, 95),
		{T: TypeRunEnd, Status: StatusOK},
	}
	s := Summarize(evs)
	if len(s.Epochs) != 2 {
		t.Fatalf("epochs %+v", s.Epochs)
	}
	near(t, "epoch 1 (slowest rank)", s.Epochs[0].WallS, 0.045)
	near(t, "epoch 2 (slowest rank)", s.Epochs[1].WallS, 0.070)
	if s.Epochs[0].Batches != 3 || s.Batches != 6 {
		t.Errorf("batches: epoch 1 %d, run %d; want 3 and 6", s.Epochs[0].Batches, s.Batches)
	}
	want := []RankTime{{0, 0.080, 2}, {1, 0.110, 2}, {2, 0.095, 2}}
	if len(s.Ranks) != 3 {
		t.Fatalf("ranks %+v", s.Ranks)
	}
	for i, w := range want {
		if g := s.Ranks[i]; g.Rank != w.Rank || g.Epochs != w.Epochs || math.Abs(g.TrainS-w.TrainS) > 1e-9 {
			t.Errorf("rank %d: %+v, want %+v", i, g, w)
		}
	}
	near(t, "straggler", s.Straggler, 0.110/0.095)
	// the sample on rank 1's compute lane is data wait, as on one process
	near(t, "data wait", s.DataWaitS, 0.020)
	near(t, "wall", s.WallS, 0.115)
	// the encoding keeps them
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || back.Straggler != s.Straggler || len(back.Ranks) != 3 {
		t.Errorf("json: %v %+v", err, back.Ranks)
	}
}

func TestSummaryOneProcessHasNoStraggler(t *testing.T) {
	s := Summarize([]Event{runStart(1), span(StageTrain, LaneCompute, 1, 0, 0, 10)})
	if s.Straggler != 0 || s.Ranks != nil {
		t.Errorf("straggler %g ranks %+v", s.Straggler, s.Ranks)
	}
	// a distributed run of which one rank has trained so far
	s = Summarize([]Event{span(StageTrain, RankLane(0, LaneCompute), 1, 0, 0, 10)})
	if s.Straggler != 0 || s.Ranks != nil || len(s.Epochs) != 1 {
		t.Errorf("one rank: straggler %g ranks %+v epochs %+v", s.Straggler, s.Ranks, s.Epochs)
	}
}

func TestRankLane(t *testing.T) {
	if got := RankLane(12, SamplerLane(3)); got != "rank12/sampler/3" {
		t.Errorf("RankLane = %q", got)
	}
	for lane, want := range map[string]struct {
		rank int
		rest string
		ok   bool
	}{
		"rank0/compute":    {0, "compute", true},
		"rank12/sampler/3": {12, "sampler/3", true},
		"rank/compute":     {0, "rank/compute", false},
		"rankx/compute":    {0, "rankx/compute", false},
		"rank1":            {0, "rank1", false},
		"compute":          {0, "compute", false},
		"rank1compute":     {0, "rank1compute", false},
	} {
		r, rest, ok := SplitRankLane(lane)
		if r != want.rank || rest != want.rest || ok != want.ok {
			t.Errorf("SplitRankLane(%q) = %d %q %v, want %+v", lane, r, rest, ok, want)
		}
	}
}

// TestStageTotalsSaturate: stage and lane totals are exact one map update
// at a time while the sum of all span durations fits an int64, and
// saturate, never wrap negative, once it does not.
func TestStageTotalsSaturate(t *testing.T) {
	a := NewAggregator()
	add := func(dur int64) {
		a.Add(Event{T: TypeSpan, Name: StageTrain, Lane: LaneCompute, Start: 0, Dur: dur})
	}
	add(3)
	add(4)
	if s := a.Summary(); s.Stages[StageTrain] != 7e-9 || s.Lanes[LaneCompute] != 7e-9 {
		t.Fatalf("exact totals: %v %v", s.Stages, s.Lanes)
	}
	for range 3 {
		add(math.MaxInt64/2 + 1)
	}
	max := float64(math.MaxInt64) / 1e9
	if s := a.Summary(); s.Stages[StageTrain] != max || s.Lanes[LaneCompute] != max {
		t.Errorf("saturated totals: %v %v, want %v", s.Stages, s.Lanes, max)
	}
}

// Cache events sum per epoch and in all; the hit rate is hits over rows.
func TestAggregatorCache(t *testing.T) {
	if s := Summarize(pipelined(1)); s.Cache != nil {
		t.Fatalf("cache stats without cache events: %+v", s.Cache)
	}
	evs := []Event{
		{T: TypeCache, Epoch: 1, Batch: 0, Hits: 30, Misses: 10, BytesH2D: 400},
		{T: TypeCache, Epoch: 0, Batch: 0, Hits: 5, Misses: 15, BytesH2D: 600},
		{T: TypeCache, Epoch: 1, Batch: 1, Hits: 10, Misses: 30, BytesH2D: 1200},
	}
	c := Summarize(evs).Cache
	if c == nil || len(c.Epochs) != 2 {
		t.Fatalf("cache stats %+v", c)
	}
	if c.Hits != 45 || c.Misses != 55 || c.BytesH2D != 2200 || c.HitRate() != 0.45 {
		t.Errorf("totals %+v, hit rate %v", c.CacheCount, c.HitRate())
	}
	e0, e1 := c.Epochs[0], c.Epochs[1]
	if e0.Epoch != 0 || e0.HitRate() != 0.25 || e1.Epoch != 1 || e1.HitRate() != 0.5 || e1.BytesH2D != 1600 {
		t.Errorf("epochs %+v", c.Epochs)
	}
	if (CacheCount{}).HitRate() != 0 {
		t.Error("hit rate of nothing is not 0")
	}
}
