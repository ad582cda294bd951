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
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
)

func memConfig(model nn.Kind) Config {
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
// peak, every guard mode trains every batch under the budget, with no OOM,
// in the baseline schedule and with sampler workers prefetching batches.
func TestGuardKeepsBatchesUnderBudget(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []nn.Kind{nn.KindSAGE, nn.KindGCN} {
		cfg := memConfig(model)
		budget := medianTrainPeak(t, cfg, ds, split)
		for i, mode := range []GuardMode{GuardResample, GuardSplit, GuardCut, GuardSplit} {
			c := cfg
			c.MemBudget, c.MemGuard = memory.Size(budget), mode
			if i == 3 {
				c.SamplerWorkers, c.Prefetch = 2, 4
			}
			res, evs := runRecorded(t, c, ds, split)
			if res.OOMCount != 0 || res.GuardActions == 0 {
				t.Errorf("%s/%s: %d OOMs, %d guard actions", model, mode, res.OOMCount, res.GuardActions)
			}
			for _, e := range eventsOf(evs, profile.TypeMem, "") {
				if e.Peak > budget || e.Live > budget {
					t.Fatalf("%s/%s: %s batch %d/%d peak %d live %d over the budget %d", model, mode, e.Phase, e.Epoch, e.Batch, e.Peak, e.Live, budget)
				}
			}
			if o := eventsOf(evs, profile.TypeOOM, ""); len(o) != 0 {
				t.Fatalf("%s/%s: oom events %+v: nothing failed", model, mode, o)
			}
			checkGuardEvents(t, string(model)+"/"+string(mode), eventsOf(evs, profile.TypeGuard, ""), res.GuardActions, budget)
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
	if _, err := Run(context.Background(), c, ds, split, cpu.New(1, 0), Options{}); err == nil || !strings.Contains(err.Error(), "for its parameters and Adam state (2 layers, 8 inputs), more than the memory budget of 1000 B") {
		t.Fatalf("tiny budget: %v", err)
	}
}

// TestEvalCut drops the requested fraction of inference edges.
func TestEvalCut(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, rule := range memory.Rules() {
		cfg := memConfig("gcn")
		cfg.Epochs, cfg.EvalCut, cfg.CutRule = 1, 0.3, rule
		res, _ := runRecorded(t, cfg, ds, split)
		e := ds.Graph.NumEdges()
		if lo, hi := int64(0.3*float64(e)), int64(0.3*float64(e))+int64(e/200)+4; res.EvalCutEdges < lo || res.EvalCutEdges > hi {
			t.Errorf("%s: cut %d of %d edges, want about 30%%", rule, res.EvalCutEdges, e)
		}
	}
}

// TestEvalCutUncutReference: with EvalCut, the selected weights are
// evaluated once more on the whole graph. After one epoch (one evaluation,
// so both runs select it, and inference does not touch training) that is
// exactly what a run without the cut reports; the cut run's own figures
// come from the cut graph. Without a cut, or with a budget, there is no
// reference.
func TestEvalCutUncutReference(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, model := range []nn.Kind{nn.KindGCN, nn.KindSAGE} {
		cfg := memConfig(model)
		cfg.Epochs = 1
		plain, _ := runRecorded(t, cfg, ds, split)
		if plain.TestAccUncut != nil || plain.ValAccUncut != nil {
			t.Fatalf("%s: uncut reference without a cut", model)
		}
		cfg.EvalCut, cfg.CutRule, cfg.CutMinKeep = 0.5, memory.RuleRandom, -1
		cut, _ := runRecorded(t, cfg, ds, split)
		if cut.TestAccUncut == nil || cut.ValAccUncut == nil {
			t.Fatalf("%s: no uncut reference with a cut", model)
		}
		if *cut.TestAccUncut != plain.TestAcc || *cut.ValAccUncut != plain.ValAcc {
			t.Fatalf("%s: uncut reference test %v val %v, the run without a cut %v %v",
				model, *cut.TestAccUncut, *cut.ValAccUncut, plain.TestAcc, plain.ValAcc)
		}
		if cut.TestAcc == plain.TestAcc && cut.ValAcc == plain.ValAcc {
			t.Fatalf("%s: cutting half the edges changed neither accuracy (%v, %v): not evaluated on the cut graph?", model, cut.TestAcc, cut.ValAcc)
		}
		cfg.MemBudget = 1 << 30
		budgeted, _ := runRecorded(t, cfg, ds, split)
		if budgeted.TestAccUncut != nil {
			t.Fatalf("%s: uncut reference under a budget", model)
		}
	}
}

// TestEvalCutNormalization: a GCN's cut inference blocks keep every
// self-loop and weigh edge (i <- j), with d the full graph's degrees and k
// those left after the cut (self-loops included), 1/sqrt(k_i k_j) with
// CutNormRenorm (the default), sqrt(d_i)/(k_i sqrt(d_j)) with CutNormScale
// and 1/sqrt(d_i d_j) with CutNormKeep; every row keeps at least the automatic
// CutMinKeep neighbors (the largest floor a 30 % cut leaves room for) or
// all it had.
func TestEvalCutNormalization(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	g := ds.Graph
	for _, norm := range []CutNorm{"", CutNormScale, CutNormRenorm, CutNormKeep} {
		cfg := memConfig("gcn")
		cfg.EvalCut, cfg.CutRule, cfg.CutNorm = 0.3, memory.RuleDegreeSum, norm
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := tr.inf.chunks(tr.model)
		if err != nil {
			t.Fatal(err)
		}
		// The automatic floor: the largest k leaving at least 30 % of the
		// edges beyond the first k neighbors of every row.
		minKeep := tr.inf.cutMinKeep()
		room := func(k int) int64 {
			var r int64
			for v := 0; v < g.N; v++ {
				r += max(0, int64(len(g.Neighbors(int32(v))))-int64(k))
			}
			return r
		}
		target := int64(math.Ceil(0.3 * float64(g.NumEdges())))
		if minKeep < 1 || room(minKeep) < target || room(minKeep+1) >= target {
			t.Fatalf("automatic min keep %d: room %d, %d with one more, cut %d", minKeep, room(minKeep), room(minKeep+1), target)
		}
		k := make([]float64, ds.NumNodes())
		var edges int64
		for _, ch := range chunks {
			for d := 0; d < ch.blk.NumDst; d++ {
				v := ch.src[d]
				k[v] = float64(ch.blk.Indptr[d+1] - ch.blk.Indptr[d])
				loops := 0
				for _, c := range ch.blk.Indices[ch.blk.Indptr[d]:ch.blk.Indptr[d+1]] {
					if ch.src[c] == v {
						loops++
					}
				}
				if loops != 1 {
					t.Fatalf("node %d aggregates itself %d times", v, loops)
				}
				if nbrs, full := int(k[v])-1, len(g.Neighbors(v)); nbrs < min(minKeep, full) {
					t.Fatalf("node %d keeps %d of %d neighbors, fewer than %d", v, nbrs, full, minKeep)
				}
			}
			edges += ch.blk.NumEdges() - int64(ch.blk.NumDst)
		}
		if want := g.NumEdges() - tr.inf.cutEdges; edges != want || tr.inf.cutEdges == 0 {
			t.Fatalf("%d edges kept, want %d (%d cut)", edges, want, tr.inf.cutEdges)
		}
		for _, ch := range chunks {
			for d := 0; d < ch.blk.NumDst; d++ {
				i := ch.src[d]
				for e := ch.blk.Indptr[d]; e < ch.blk.Indptr[d+1]; e++ {
					j := ch.src[ch.blk.Indices[e]]
					di, dj := float64(tr.deg[i]), float64(tr.deg[j])
					var want float64
					switch norm {
					case CutNormScale:
						want = math.Sqrt(di) / (k[i] * math.Sqrt(dj))
					case "", CutNormRenorm:
						want = 1 / math.Sqrt(k[i]*k[j])
					case CutNormKeep:
						want = 1 / math.Sqrt(di*dj)
					}
					if got := float64(ch.blk.Weights[e]); math.Abs(got-want) > 1e-6*want {
						t.Fatalf("%q: weight of edge %d->%d is %g, want %g", norm, j, i, got, want)
					}
				}
			}
		}
		tr.close()
	}
}

// TestCutKeepsMostEdges: the guard's cut of a training batch and the
// budget's cut of an inference chunk keep the largest number of edges that
// fits: the result fits (as predicted, for the guard; by the analytic
// bound, for inference), it is the cut the rule's whole order gives (the
// guard orders only a prefix), and keeping one more edge of that order
// does not fit.
func TestCutKeepsMostEdges(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	cfg := memConfig("sage")
	cfg.BatchSize, cfg.Fanouts = 120, []int{8, 6}
	cfg.MemBudget, cfg.MemGuard = 1<<30, GuardCut
	for _, rule := range memory.Rules() {
		cfg.CutRule = rule
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.guard.calibrate(tr.load); err != nil {
			t.Fatal(err)
		}
		lm, ok := tr.mem.pred.Model()
		if !ok {
			t.Fatal("predictor not calibrated")
		}
		w := tr.sampler.NewWorker()
		cuts := 0
		for i := 0; i < 6; i++ {
			b, err := w.Sample(1, i, split.Train[i*20:i*20+cfg.BatchSize/2])
			if err != nil {
				t.Fatal(err)
			}
			shape := shapeOf(b)
			pred, _ := lm.Predict(shape)
			// Rooms that need a few edges cut, or many.
			room := int64(float64(pred) * (1 + lm.Margin) * (1 - 0.002*float64(1+3*i)))
			cut, cpred, err := tr.guard.cutBatch(lm, b, pred, room)
			if err != nil {
				t.Fatal(err)
			}
			fits := func(nsrc int, ne int64) bool {
				s := shapeOf(b)
				s.Nodes[0], s.Edges[0] = nsrc, ne
				p, _ := lm.Predict(s)
				return lm.Fits(p, room)
			}
			order, err := tr.guard.batchCutOrder(b).Prefix(b.Blocks[0], b.Nodes, tr.deg, b.Blocks[0].NumEdges())
			if err != nil {
				t.Fatal(err)
			}
			want, _, dropped, ok := memory.Cut(b.Blocks[0], order, fits)
			if !ok {
				if cut != nil {
					t.Fatalf("%s: batch %d cut though no cut fits", rule, i)
				}
				continue
			}
			if cut == nil || dropped == 0 {
				t.Fatalf("%s: batch %d: no cut (dropped %d)", rule, i, dropped)
			}
			got := cut.Blocks[0]
			if got.NumEdges() != want.NumEdges() || got.NumSrc != want.NumSrc || !slices.Equal(got.Indices, want.Indices) {
				t.Fatalf("%s: batch %d: cut keeps %d edges, the whole order's cut %d", rule, i, got.NumEdges(), want.NumEdges())
			}
			if !lm.Fits(cpred, room) || !fits(got.NumSrc, got.NumEdges()) {
				t.Fatalf("%s: batch %d: cut batch predicted %d, room %d", rule, i, cpred, room)
			}
			if _, _, _, ok := memory.Cut(b.Blocks[0], order[:dropped-1], fits); ok {
				t.Fatalf("%s: batch %d: keeping one more edge fits too", rule, i)
			}
			cuts++
		}
		if cuts < 3 {
			t.Fatalf("%s: only %d of 6 batches could be cut to fit", rule, cuts)
		}
		// Inference: a budget that a chunk's full neighborhood exceeds.
		chunk := 200
		dst := make([]int32, chunk)
		for i := range dst {
			dst[i] = int32(i)
		}
		blk, src, err := sample.FullBlock(ds.Graph, dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		full := evalPeak(tr.model, blk.NumSrc, blk.NumDst)
		tr.inf.budget = tr.inf.resident + (full+evalPeak(tr.model, chunk, chunk))/2
		out, _, dropped, err := tr.inf.cutChunk(tr.model, blk, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		room := tr.inf.budget - tr.inf.resident
		if dropped == 0 || evalPeak(tr.model, out.NumSrc, out.NumDst) > room || out.NumEdges() != blk.NumEdges()-dropped {
			t.Fatalf("%s: inference chunk: dropped %d, peak %d, room %d", rule, dropped, evalPeak(tr.model, out.NumSrc, out.NumDst), room)
		}
		order, _ := tr.inf.cutOrder(0).Prefix(blk, src, tr.deg, blk.NumEdges())
		fits := func(ns int, ne int64) bool { return evalPeak(tr.model, ns, blk.NumDst) <= room }
		if _, _, _, ok := memory.Cut(blk, order[:dropped-1], fits); ok {
			t.Fatalf("%s: inference chunk: keeping one more edge fits too", rule)
		}
		tr.close()
	}
}

// checkGuardEvents checks the guard events of a run whose guard acted n
// times under budget: one event an action, each with the action of a
// guard mode, a prediction over what the guard found room for and an
// actual peak, measured after the action, within the budget.
func checkGuardEvents(t *testing.T, name string, gs []profile.Event, n int, budget int64) {
	t.Helper()
	if len(gs) != n || n == 0 {
		t.Fatalf("%s: %d guard events, %d guard actions", name, len(gs), n)
	}
	for _, e := range gs {
		switch e.Action {
		case profile.ActionSplit, profile.ActionCut, profile.ActionResampled:
		default:
			t.Fatalf("%s: guard event with action %q", name, e.Action)
		}
		if e.Budget != budget || e.Predicted <= 0 || e.Actual <= 0 || e.Actual > budget {
			t.Fatalf("%s: guard event %+v (budget %d)", name, e, budget)
		}
	}
}
