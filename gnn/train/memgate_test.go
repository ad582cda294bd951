package train

import (
	"context"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// TestGuardWithOverlappedEval: with a tight budget (the median training
// batch peak), the guard, overlapped evaluation and sampler workers, the
// evaluation of epoch e allocates while epoch e+1 trains; the memory gate
// keeps them together under the budget. The run has no OOM anywhere (the
// allocator refused nothing), the device's peak stays within the budget,
// every training and inference chunk peak recorded as a mem event is
// under it, and every epoch was evaluated. The guard's decisions do not
// depend on the timing: the baseline schedule and repeated pipelined runs
// train the same batches (identical losses and accuracies).
func TestGuardWithOverlappedEval(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []nn.Kind{nn.KindSAGE, nn.KindGCN} {
		cfg := memConfig(model)
		cfg.Epochs = 4
		budget := medianTrainPeak(t, cfg, ds, split)
		cfg.MemBudget, cfg.MemGuard, cfg.OverlapEval = memory.Size(budget), GuardSplit, true
		var ref []EpochStat
		for run, workers := range []int{2, 2, 0} {
			c := cfg
			c.SamplerWorkers, c.Prefetch = workers, 4*min(workers, 1)
			sink := &memSink{}
			rec := profile.NewRecorder(sink, profile.RecorderOptions{})
			rec.RunStart("r", "s", "v", nil, &profile.Host{Cores: 2})
			dev := cpu.New(2, 0)
			res, err := Run(context.Background(), c, ds, split, dev, Options{Recorder: rec})
			if cerr := rec.Close("", err, nil); cerr != nil {
				t.Fatal(cerr)
			}
			if err != nil {
				t.Fatalf("%s, %d workers: %v", model, workers, err)
			}
			st := dev.Mem().Stats()
			if res.OOMCount != 0 || st.OOMs != 0 || st.Peak > budget || st.Live != 0 {
				t.Fatalf("%s, %d workers: %d OOMs recorded, %d refused by the allocator, device peak %d (budget %d), %d live",
					model, workers, res.OOMCount, st.OOMs, st.Peak, budget, st.Live)
			}
			evs := sink.evs
			if o := eventsOf(evs, profile.TypeOOM, ""); len(o) != 0 {
				t.Fatalf("%s, %d workers: oom events %+v: nothing failed", model, workers, o)
			}
			if g := eventsOf(evs, profile.TypeGuard, ""); len(g) != res.GuardActions {
				t.Fatalf("%s, %d workers: %d guard events, %d guard actions", model, workers, len(g), res.GuardActions)
			}
			evalEpochs := map[int]bool{}
			for _, phase := range []string{profile.PhaseTrain, profile.PhaseEval} {
				mem := eventsOf(evs, profile.TypeMem, phase)
				if len(mem) == 0 {
					t.Fatalf("%s, %d workers: no %s mem events", model, workers, phase)
				}
				for _, e := range mem {
					if e.Peak > budget || e.Peak <= res.ParamBytes || e.Budget != budget {
						t.Fatalf("%s, %d workers: %s batch %d/%d peak %d (budget %d, params %d)", model, workers, phase, e.Epoch, e.Batch, e.Peak, budget, res.ParamBytes)
					}
					if phase == profile.PhaseEval {
						evalEpochs[e.Epoch] = true
					}
				}
			}
			if len(evalEpochs) != c.Epochs || len(res.History) != c.Epochs {
				t.Fatalf("%s, %d workers: evaluated epochs %v, history %d", model, workers, evalEpochs, len(res.History))
			}
			h := slices.Clone(res.History)
			for i := range h {
				h[i].TrainS, h[i].EvalS = 0, 0
			}
			if run == 0 {
				ref = h
				if res.GuardActions == 0 {
					t.Fatalf("%s: the guard never acted at the median batch peak", model)
				}
			} else if !slices.Equal(h, ref) {
				t.Fatalf("%s, %d workers, run %d: history %+v, want %+v", model, workers, run, h, ref)
			}
		}
	}
}
