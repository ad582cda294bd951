package train

import (
	"context"
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// memSink keeps every event a recorder hands it.
type memSink struct {
	mu  sync.Mutex
	evs []profile.Event
}

func (s *memSink) WriteEvents(evs []profile.Event) error {
	s.mu.Lock()
	s.evs = append(s.evs, evs...)
	s.mu.Unlock()
	return nil
}
func (s *memSink) Flush() error { return nil }

func runRecorded(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split) (*Result, []profile.Event) {
	t.Helper()
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	host := profile.Host{Cores: 2}
	rec.RunStart("r", "s", "v", nil, &host)
	dev := cpu.New(2, 0)
	res, err := Run(context.Background(), cfg, ds, split, dev, Options{Recorder: rec})
	if cerr := rec.Close("", err, nil); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes live after the run", live)
	}
	return res, sink.evs
}

// TestSchedulesTrainTheSameModel checks that moving sampling and gathering
// onto workers (any number, any prefetch depth) and overlapping evaluation
// change only the timing: every epoch's loss and accuracies are identical to
// the baseline's, so each batch was the same.
func TestSchedulesTrainTheSameModel(t *testing.T) {
	ds := plantedPartition(t, 800, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := Defaults("sage")
	base.Epochs, base.Hidden, base.BatchSize, base.Fanouts = 4, 16, 16, []int{5, 3}
	want, wantEvs := runRecorded(t, base, ds, split)
	if want.History[0].Batches != 10 {
		t.Fatalf("%d batches per epoch, want 10", want.History[0].Batches)
	}
	for _, lane := range lanesOf(wantEvs, profile.StageSample) {
		if lane != profile.LaneCompute {
			t.Fatalf("baseline sampled on lane %q, want the trainer's", lane)
		}
	}
	for _, tc := range []struct {
		workers, prefetch int
		overlap           bool
	}{{1, 1, false}, {2, 4, false}, {3, 2, true}, {2, 4, true}, {0, 0, true}} {
		cfg := base
		cfg.SamplerWorkers, cfg.Prefetch, cfg.OverlapEval = tc.workers, tc.prefetch, tc.overlap
		got, evs := runRecorded(t, cfg, ds, split)
		if len(got.History) != len(want.History) {
			t.Fatalf("%+v: %d epochs reported, want %d", tc, len(got.History), len(want.History))
		}
		for i, h := range got.History {
			w := want.History[i]
			if h.Epoch != w.Epoch || h.Loss != w.Loss || h.TrainAcc != w.TrainAcc || h.ValAcc != w.ValAcc || h.TestAcc != w.TestAcc {
				t.Fatalf("%+v: epoch %d = %+v, baseline %+v", tc, i+1, h, w)
			}
		}
		if got.TestAcc != want.TestAcc || got.BestEpoch != want.BestEpoch {
			t.Fatalf("%+v: best epoch %d test %.4f, baseline %d %.4f", tc, got.BestEpoch, got.TestAcc, want.BestEpoch, want.TestAcc)
		}
		if tc.workers > 0 {
			for _, lane := range lanesOf(evs, profile.StageSample) {
				if !profile.IsSamplerLane(lane) {
					t.Fatalf("%+v: sample span on lane %q", tc, lane)
				}
			}
			if len(lanesOf(evs, profile.StageWait)) == 0 {
				t.Fatalf("%+v: no wait spans", tc)
			}
		}
		if tc.overlap {
			// Each epoch's evaluation ran on the eval lane and is reported
			// for that epoch, with the accuracies of that epoch's weights
			// (equal to the baseline's, checked above).
			evals := spansNamed(evs, profile.StageEval)
			if len(evals) != base.Epochs {
				t.Fatalf("%+v: %d eval spans, want %d", tc, len(evals), base.Epochs)
			}
			for i, e := range evals {
				if e.Lane != profile.LaneEval || e.Epoch != i+1 {
					t.Fatalf("%+v: eval span %d on lane %q for epoch %d", tc, i, e.Lane, e.Epoch)
				}
			}
			// Epoch e's evaluation overlaps epoch e+1's training.
			e1 := evals[0]
			overlapped := false
			for _, s := range spansNamed(evs, profile.StageTrain) {
				if s.Epoch == 2 && s.Start < e1.End() && s.End() > e1.Start {
					overlapped = true
				}
			}
			if !overlapped {
				t.Logf("%+v: epoch 1's evaluation did not overlap epoch 2's training this time", tc)
			}
		}
	}
}

// TestStageFiguresReported checks that a recorded run reports its stage
// figures and that every train span has its children.
func TestStageFiguresReported(t *testing.T) {
	ds := plantedPartition(t, 300, 3, 4)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 50, 100, 0)
	cfg := Defaults("sage")
	cfg.Epochs, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = 2, 8, 20, []int{4, 4}
	res, evs := runRecorded(t, cfg, ds, split)
	for _, stage := range []string{"sample", "transfer", "train", "forward", "backward", "step", "eval"} {
		if res.StageS[stage] <= 0 {
			t.Errorf("stage %s: %v seconds", stage, res.StageS[stage])
		}
	}
	if res.DataWaitS <= 0 || res.Overlap <= 0 || res.Efficiency <= 0 || res.Efficiency > 1 {
		t.Errorf("data wait %v overlap %v efficiency %v", res.DataWaitS, res.Overlap, res.Efficiency)
	}
	trains := spansNamed(evs, profile.StageTrain)
	if want := res.History[0].Batches * cfg.Epochs; len(trains) != want {
		t.Fatalf("%d train spans, want %d", len(trains), want)
	}
	for _, child := range []string{profile.StageForward, profile.StageBackward, profile.StageStep} {
		if n := len(spansNamed(evs, child)); n != len(trains) {
			t.Errorf("%d %s spans for %d train spans", n, child, len(trains))
		}
	}
}

func spansNamed(evs []profile.Event, name string) []profile.Event {
	var out []profile.Event
	for _, e := range evs {
		if e.T == profile.TypeSpan && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func lanesOf(evs []profile.Event, name string) []string {
	var out []string
	for _, e := range spansNamed(evs, name) {
		out = append(out, e.Lane)
	}
	return out
}

// TestFullBatchIsSequential checks that a full-batch run, which does one
// thing at a time, reports an overlap of exactly 1 (no span overlaps another
// top-level span).
func TestFullBatchIsSequential(t *testing.T) {
	ds := plantedPartition(t, 200, 2, 5)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 50, 50, 0)
	cfg := Defaults("gcn")
	cfg.Epochs = 3
	res, evs := runRecorded(t, cfg, ds, split)
	if res.Overlap > 1+1e-9 {
		t.Errorf("overlap %.4f, want at most 1 for a sequential run", res.Overlap)
	}
	if n := len(spansNamed(evs, profile.StageTransfer)); n != 1 {
		t.Errorf("%d transfer spans, want 1 (features move to the device once)", n)
	}
}

// TestCachedInputAggregate checks that inference from the cached first-layer
// aggregate predicts exactly what inference from scratch does, for both
// models, several chunks, and after the weights change.
func TestCachedInputAggregate(t *testing.T) {
	ds := plantedPartition(t, 500, 4, 6)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 100, 200, 0)
	for _, model := range []nn.Kind{nn.KindGCN, nn.KindSAGE} {
		cfg := Defaults(model)
		cfg.Hidden = 32 // wider than the 8 features: the first layer aggregates first
		cfg.EvalChunk = 128
		dev := cpu.New(2, 0)
		tr, err := newTrainer(cfg, ds, split, dev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := tr.model.Layers[0].(interface{ AggregatesFirst() bool }); !p.AggregatesFirst() {
			t.Fatalf("%s: first layer should aggregate first for this test", model)
		}
		full := tr.fullBatch()
		for round := 0; round < 2; round++ {
			tr.inf.opts.noAggCache = false
			cached, err := tr.inf.run(inferRequest{dev: dev, model: tr.model})
			if err != nil {
				t.Fatal(err)
			}
			if tr.inf.agg0 == nil {
				t.Fatalf("%s: no aggregate was cached", model)
			}
			tr.inf.opts.noAggCache = true
			fresh, err := tr.inf.run(inferRequest{dev: dev, model: tr.model})
			if err != nil {
				t.Fatal(err)
			}
			for i := range fresh {
				if cached[i] != fresh[i] {
					t.Fatalf("%s round %d: node %d predicted %d from the cache, %d from scratch", model, round, i, cached[i], fresh[i])
				}
			}
			// Change the weights: the cache must still be valid.
			st := EpochStat{Epoch: 1}
			if err := full.epoch(context.Background(), 1, &st); err != nil {
				t.Fatal(err)
			}
		}
		full.close()
		tr.close()
	}
}
