package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// epochLoop is the state of one run's epochs: the result being filled,
// the overlapped evaluation and the epoch callback.
type epochLoop struct {
	res     *Result
	ov      *overlapEval // nil without Config.OverlapEval
	onEpoch func(EpochStat)
}

// run sets the run up, trains its epochs with the configured schedule and
// fills the result.
func (t *trainer) run(ctx context.Context, onEpoch func(EpochStat)) (*Result, error) {
	res := &Result{Epochs: t.cfg.Epochs, BestEpoch: -1, ValAcc: -1, ParamBytes: t.model.ParamBytes()}
	if err := t.setup(res); err != nil {
		return nil, err
	}
	start := time.Now()
	lp := &epochLoop{res: res, onEpoch: onEpoch}
	if t.cfg.OverlapEval {
		lp.ov = &overlapEval{t: t, deliver: lp.deliver(t)}
		// The evaluation in flight uses the model's device and the
		// recorder: wait for it on every way out, before the caller frees
		// them.
		defer lp.ov.drain()
	}
	ran, err := t.epochs(ctx, lp)
	if err != nil {
		return nil, err
	}
	if err := lp.ov.finish(); err != nil {
		return nil, err
	}
	res.Epochs = ran
	res.TrainS = time.Since(start).Seconds()
	res.EpochS = res.TrainS / float64(max(ran, 1))
	return res, t.finish(res)
}

// setup is the one-time work before the first epoch, the same for every
// schedule: the feature cache (setupCache), the memory guard's
// calibration, the inference blocks and first-layer input aggregate that
// every evaluation reuses, and the schedule (GAS partitions the graph and
// fills its histories). It is a setup span (the cache's pre-sampling pass
// one of its own): in the wall time, not in any epoch.
func (t *trainer) setup(res *Result) error {
	rec := t.rec
	s0, w0 := rec.Now(), time.Now()
	cs, err := setupCache(t)
	if err != nil {
		return err
	}
	if cs.dur > 0 { // the pre-sampling pass is a setup span of its own
		s0 = cs.start + cs.dur
	}
	if err := t.guard.calibrate(t.load); err != nil {
		return err
	}
	plan, err := planBudget(t)
	if err != nil {
		return err
	}
	if note, err := fitGASParts(t); err != nil {
		return err
	} else if note != "" {
		plan = append(plan, note)
	}
	if cs.note != "" {
		plan = append([]string{cs.note}, plan...)
	}
	plan = append(t.gpu.planLines(t.x), plan...)
	if t.onStart != nil {
		t.onStart(plan)
	}
	cs.record(rec)
	if chunks, err := t.inf.chunks(t.model); err != nil {
		return fmt.Errorf("inference blocks: %w", err)
	} else if _, err := t.inf.inputAggregate(t.dev, t.model, chunks); err != nil {
		return fmt.Errorf("input aggregate: %w", err)
	}
	sched, err := t.newSchedule()
	if err != nil {
		return err
	}
	t.sched = sched
	rec.Span(profile.StageSetup, profile.LaneCompute, 0, 0, s0, rec.Now()-s0)
	res.SetupS = time.Since(w0).Seconds()
	return nil
}

// epochs trains until the last epoch, patience or an error, and returns
// the number of epochs trained.
func (t *trainer) epochs(ctx context.Context, lp *epochLoop) (int, error) {
	ran := 0
	for epoch := 1; epoch <= t.cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return ran, err
		}
		st := EpochStat{Epoch: epoch}
		t0 := time.Now()
		if err := t.sched.epoch(ctx, epoch, &st); err != nil {
			return ran, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		st.TrainS = time.Since(t0).Seconds()
		st.Cache = t.load.tally.Epoch(epoch)
		ran = epoch
		lp.res.Batches += st.Batches
		if err := t.checkTrained(lp.res, epoch); err != nil {
			return ran, err
		}
		if rss, err := memory.HostRSS(); err == nil {
			t.rec.Metric("host_rss", epoch, -1, float64(rss))
		}
		t.rec.Metric("loss", epoch, -1, st.Loss)
		t.rec.Metric("train_acc", epoch, -1, st.TrainAcc)
		stop, err := t.endEpoch(lp, st)
		if err != nil || stop {
			return ran, err
		}
	}
	return ran, nil
}

// ErrNothingTrained is the error of a run whose every training batch ran
// out of memory and was skipped (Config.OnOOM skip): it trained nothing,
// so it failed, whatever its loss and accuracies would say. The error
// wraps it with the counts and the last batch's out-of-memory error, as
// text: the run failed, it was not aborted by an OOM.
var ErrNothingTrained = errors.New("every training batch ran out of memory")

// checkTrained fails the run once an epoch has ended without a single
// batch trained since the start and with batches skipped: the next epochs
// would skip theirs alike, under the same budget.
func (t *trainer) checkTrained(res *Result, epoch int) error {
	if res.Batches > 0 {
		return nil
	}
	n, last := t.policy.skips()
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of %d batches skipped by epoch %d; the last: %v", ErrNothingTrained, n, n, epoch, last)
}

// endEpoch reports a trained epoch: as it is when it is not evaluated,
// with its evaluation (in turn), or once its overlapped evaluation has
// finished, which the next epoch's training does not wait for. It reports
// whether patience has run out.
func (t *trainer) endEpoch(lp *epochLoop, st EpochStat) (stop bool, err error) {
	epoch := st.Epoch
	switch {
	case !(epoch%t.cfg.EvalEvery == 0 || epoch == t.cfg.Epochs):
		lp.report(st)
		t.rec.Flush()
	case lp.ov != nil:
		// At most one evaluation in flight: the previous epoch's must
		// finish before this epoch's snapshot is evaluated.
		if err := lp.ov.finish(); err != nil {
			return false, err
		}
		if t.sel.stop() {
			lp.report(st) // trained, not evaluated
			return true, nil
		}
		if err := lp.ov.start(st); err != nil {
			return false, err
		}
		t.rec.Flush()
	default:
		r := t.evaluate(t.dev, t.model, profile.LaneCompute, epoch)
		if r.err != nil {
			return false, fmt.Errorf("epoch %d evaluation: %w", epoch, r.err)
		}
		t.record(lp.res, &st, r)
		if lp.onEpoch != nil {
			lp.onEpoch(st)
		}
		t.rec.Flush()
		return t.sel.stop(), nil
	}
	return false, nil
}

// report adds an epoch that was not evaluated to the history.
func (lp *epochLoop) report(st EpochStat) {
	lp.res.History = append(lp.res.History, st)
	if lp.onEpoch != nil {
		lp.onEpoch(st)
	}
}

// deliver returns what a finished overlapped evaluation does: it is
// recorded for its epoch, which is then reported.
func (lp *epochLoop) deliver(t *trainer) func(*EpochStat, evalResult) {
	return func(st *EpochStat, r evalResult) {
		t.record(lp.res, st, r)
		if lp.onEpoch != nil {
			lp.onEpoch(*st)
		}
	}
}

// finish fills the result's figures once training is over.
func (t *trainer) finish(res *Result) error {
	res.PeakBytes = t.dev.Mem().Stats().Peak
	t.mem.result(res)
	res.OOMCount, res.GuardActions = t.policy.counts()
	res.SkippedBatches, _ = t.policy.skips()
	res.EvalCutEdges = t.inf.cut()
	// After the peak is read: the reference evaluation is not the run's.
	if err := t.uncutEval(res); err != nil {
		return fmt.Errorf("uncut reference evaluation: %w", err)
	}
	res.Steps = t.opt.Steps()
	if f, ok := t.sched.(resultFiller); ok {
		f.fill(res)
	}
	if t.cache != nil {
		t.load.tally.Fill(t.cache, res.Epochs)
		res.Cache = t.cache
	}
	if rec := t.rec; rec != nil {
		rec.Flush()
		sum := rec.Summary()
		res.StageS = map[string]float64{}
		for name, v := range sum.Stages {
			res.StageS[name] = v
		}
		res.DataWaitS, res.Overlap, res.Efficiency = sum.DataWaitS, sum.Overlap, sum.Efficiency
	}
	return nil
}

// evalResult is the outcome of one evaluation.
type evalResult struct {
	val, test float64
	valLoss   float64 // mean cross-entropy of the validation nodes
	secs      float64
	err       error
	params    [][]float32 // the evaluated weights on the host (uncutReference only)
}

// evaluate runs layer-wise inference with model m, recording an eval span
// on lane, and returns the validation and test accuracies and the
// validation loss. An out-of-memory error is recorded as an oom event
// that aborts the run.
func (t *trainer) evaluate(dev device.Device, m *nn.Model, lane string, epoch int) evalResult {
	t0 := t.rec.Now()
	w0 := time.Now()
	req := inferRequest{dev: dev, model: m, epoch: epoch, ce: &valCE{isVal: t.isVal, y: t.ds.Y}}
	if k, ok := t.sched.(layerKeeper); ok && m == t.model {
		req.keep = k.keeper(epoch)
	}
	preds, err := t.inf.run(req)
	if err != nil {
		t.policy.abort(err, epoch, -1)
	}
	t.rec.Span(profile.StageEval, lane, epoch, 0, t0, t.rec.Now()-t0)
	if err != nil {
		return evalResult{err: err}
	}
	r := evalResult{
		val:     accuracy(preds, t.ds.Y, t.split.Valid),
		test:    accuracy(preds, t.ds.Y, t.split.Test),
		valLoss: req.ce.loss(),
		secs:    time.Since(w0).Seconds(),
	}
	if t.uncutReference() {
		r.params = hostParams(dev, m)
	}
	return r
}

// record stores an evaluation's figures in the epoch's statistics and the
// run's result.
func (t *trainer) record(res *Result, st *EpochStat, r evalResult) {
	st.Evaluated = true
	st.ValAcc, st.ValLoss, st.TestAcc, st.EvalS = r.val, r.valLoss, r.test, r.secs
	res.EvalS += r.secs
	if t.sel.observe(st.Epoch, st.ValAcc, st.ValLoss) {
		res.ValAcc, res.ValLoss, res.TestAcc, res.BestEpoch = st.ValAcc, st.ValLoss, st.TestAcc, st.Epoch
		if r.params != nil {
			t.best = r.params
		}
	}
	t.rec.Metric("val_acc", st.Epoch, -1, st.ValAcc)
	t.rec.Metric("val_loss", st.Epoch, -1, st.ValLoss)
	t.rec.Metric("test_acc", st.Epoch, -1, st.TestAcc)
	res.History = append(res.History, *st)
}

// uncutEval evaluates the selected epoch's weights (t.best) on the whole
// graph, without the inference cut, and stores the accuracies in res (see
// Result.TestAccUncut). It runs after the training loop, outside train_s
// and the recorded spans; without uncutReference it does nothing.
func (t *trainer) uncutEval(res *Result) error {
	if !t.uncutReference() || t.best == nil {
		return nil
	}
	m, err := t.model.Snapshot(t.dev)
	if err != nil {
		return err
	}
	defer m.Free(t.dev)
	for i, p := range m.Params() {
		t.dev.CopyFromHost(p.W, t.best[i])
	}
	preds, err := t.inf.uncut(t.dev, m)
	if err != nil {
		return err
	}
	test, val := accuracy(preds, t.ds.Y, t.split.Test), accuracy(preds, t.ds.Y, t.split.Valid)
	res.TestAccUncut, res.ValAccUncut = &test, &val
	return nil
}
