package train

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/profile"
)

func memConfig(model string) Config {
	c := Defaults(model)
	c.Sampler = "neighbor"
	c.Epochs, c.Hidden, c.BatchSize, c.Fanouts, c.EvalChunk = 3, 16, 24, []int{6, 4}, 200
	return c
}

func eventsOf(evs []profile.Event, typ, phase string) []profile.Event {
	var out []profile.Event
	for _, e := range evs {
		if e.T == typ && (phase == "" || e.Phase == phase) {
			out = append(out, e)
		}
	}
	return out
}

// medianTrainPeak runs cfg without a budget and returns the median batch peak.
func medianTrainPeak(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split) int64 {
	_, evs := runRecorded(t, cfg, ds, split)
	var p []int64
	for _, e := range eventsOf(evs, profile.TypeMem, profile.PhaseTrain) {
		p = append(p, e.Peak)
	}
	if len(p) < 20 {
		t.Fatalf("%d train mem events", len(p))
	}
	slices.Sort(p)
	return p[len(p)/2]
}

// TestGuardKeepsBatchesUnderBudget: with a budget at the median batch
// peak, every guard mode trains every batch under the budget, with no OOM.
func TestGuardKeepsBatchesUnderBudget(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"sage", "gcn"} {
		cfg := memConfig(model)
		budget := medianTrainPeak(t, cfg, ds, split)
		for _, mode := range []string{GuardResample, GuardSplit, GuardCut} {
			c := cfg
			c.MemBudget, c.MemGuard = memory.Size(budget), mode
			res, evs := runRecorded(t, c, ds, split)
			if res.OOMCount != 0 || res.GuardActions == 0 {
				t.Errorf("%s/%s: %d OOMs, %d guard actions", model, mode, res.OOMCount, res.GuardActions)
			}
			for _, e := range eventsOf(evs, profile.TypeMem, "") {
				if e.Peak > budget || e.Live > budget {
					t.Fatalf("%s/%s: %s batch %d/%d peak %d live %d over the budget %d", model, mode, e.Phase, e.Epoch, e.Batch, e.Peak, e.Live, budget)
				}
			}
			for _, e := range eventsOf(evs, profile.TypeOOM, "") {
				if e.Action == profile.ActionSkip || e.Action == profile.ActionAbort {
					t.Fatalf("%s/%s: oom event %+v", model, mode, e)
				}
			}
			if res.MaxBatchPeakBytes > budget || res.PredictorMAPE == nil || *res.PredictorMAPE > 0.03 {
				t.Errorf("%s/%s: max peak %d (budget %d), MAPE %v", model, mode, res.MaxBatchPeakBytes, budget, res.PredictorMAPE)
			}
		}
	}
}

// TestMemEventsExact: a training batch's recorded peak is the resident
// bytes plus the batch's own scoped peak, so without a budget the largest
// one never exceeds the device's own peak, and inference chunks stay within
// their analytic bound.
func TestMemEventsExact(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	cfg := memConfig("sage")
	cfg.MemBudget = 1 << 30 // large: predictions are recorded for eval chunks
	res, evs := runRecorded(t, cfg, ds, split)
	if res.MaxBatchPeakBytes <= res.ParamBytes || res.MaxBatchPeakBytes > res.PeakBytes {
		t.Fatalf("max batch peak %d, params %d, device peak %d", res.MaxBatchPeakBytes, res.ParamBytes, res.PeakBytes)
	}
	ev := eventsOf(evs, profile.TypeMem, profile.PhaseEval)
	if len(ev) == 0 {
		t.Fatal("no eval mem events")
	}
	for _, e := range ev {
		if e.Peak > e.Predicted || e.Peak <= res.ParamBytes {
			t.Fatalf("eval chunk %d: peak %d, analytic %d", e.Batch, e.Peak, e.Predicted)
		}
	}
	if n := len(eventsOf(evs, profile.TypeMetric, "")); n == 0 {
		t.Fatal("no metrics")
	}
}

// TestOOMPolicies: skip records every OOM and finishes; abort stops with a
// typed OOM error after recording it; a budget below the model is refused.
func TestOOMPolicies(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	cfg := memConfig("sage")
	budget := medianTrainPeak(t, cfg, ds, split)

	c := cfg
	c.MemBudget, c.OnOOM = memory.Size(budget), OOMSkip
	res, evs := runRecorded(t, c, ds, split)
	ooms := eventsOf(evs, profile.TypeOOM, "")
	if res.OOMCount == 0 || len(ooms) != res.OOMCount {
		t.Fatalf("skip: %d OOMs, %d oom events", res.OOMCount, len(ooms))
	}
	for _, e := range ooms {
		if e.Action != profile.ActionSkip || e.Budget != budget || e.Live+e.Requested <= budget {
			t.Fatalf("skip: oom event %+v", e)
		}
	}

	c.OnOOM = OOMAbort
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	dev := cpu.New(2, 0)
	_, err := Run(context.Background(), c, ds, split, dev, Options{Recorder: rec})
	rec.Close("", err, nil)
	if !device.IsOOM(err) {
		t.Fatalf("abort: err %v, want an OOM", err)
	}
	if o := eventsOf(sink.evs, profile.TypeOOM, ""); len(o) != 1 || o[0].Action != profile.ActionAbort {
		t.Fatalf("abort: oom events %+v", o)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("abort: %d bytes live", live)
	}

	c.MemBudget = 1000
	if _, err := Run(context.Background(), c, ds, split, cpu.New(1, 0), Options{}); err == nil || !strings.Contains(err.Error(), "smaller than the model") {
		t.Fatalf("tiny budget: %v", err)
	}
}

// TestEvalCut drops the requested fraction of inference edges.
func TestEvalCut(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, rule := range memory.Rules {
		cfg := memConfig("gcn")
		cfg.Epochs, cfg.EvalCut, cfg.CutRule = 1, 0.3, rule
		res, _ := runRecorded(t, cfg, ds, split)
		e := ds.Graph.NumEdges()
		if lo, hi := int64(0.3*float64(e)), int64(0.3*float64(e))+int64(e/200)+4; res.EvalCutEdges < lo || res.EvalCutEdges > hi {
			t.Errorf("%s: cut %d of %d edges, want about 30%%", rule, res.EvalCutEdges, e)
		}
	}
}

// TestEvalCutRenormalizes: a GCN's cut inference blocks are normalized
// with the degrees of the cut graph (self-loop included, never cut), as
// GCN normalizes any graph: weight(i, j) = 1/sqrt(k_i k_j).
func TestEvalCutRenormalizes(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	cfg := memConfig("gcn")
	cfg.EvalCut, cfg.CutRule = 0.3, memory.RuleDegreeSum
	tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	chunks, err := tr.evalChunks(tr.model)
	if err != nil {
		t.Fatal(err)
	}
	k := make([]float64, ds.NumNodes())
	var edges int64
	for _, ch := range chunks {
		for d := 0; d < ch.blk.NumDst; d++ {
			k[ch.src[d]] = float64(ch.blk.Indptr[d+1] - ch.blk.Indptr[d])
			loops := 0
			for _, c := range ch.blk.Indices[ch.blk.Indptr[d]:ch.blk.Indptr[d+1]] {
				if ch.src[c] == ch.src[d] {
					loops++
				}
			}
			if loops != 1 {
				t.Fatalf("node %d aggregates itself %d times", ch.src[d], loops)
			}
		}
		edges += ch.blk.NumEdges() - int64(ch.blk.NumDst)
	}
	if want := ds.Graph.NumEdges() - tr.mem.evalCut; edges != want {
		t.Fatalf("%d edges kept, want %d", edges, want)
	}
	for _, ch := range chunks {
		for d := 0; d < ch.blk.NumDst; d++ {
			for e := ch.blk.Indptr[d]; e < ch.blk.Indptr[d+1]; e++ {
				want := 1 / math.Sqrt(k[ch.src[d]]*k[ch.src[ch.blk.Indices[e]]])
				if got := float64(ch.blk.Weights[e]); math.Abs(got-want) > 1e-6*want {
					t.Fatalf("weight of edge %d->%d is %g, want %g", ch.src[ch.blk.Indices[e]], ch.src[d], got, want)
				}
			}
		}
	}
}
