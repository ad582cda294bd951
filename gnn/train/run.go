package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gnnscope/gnnscope/gnn/memory"
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
		lp.ov = &overlapEval{dev: t.dev, model: t.model, ds: t.ds, eval: t.eval, deliver: lp.deliver(t)}
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
	cs, err := setupCache(t.cacheDeps())
	if cs.cache != nil { // freed by close, whatever the error
		t.load.cache, t.load.tally, t.cache = cs.cache, cs.tally, cs.report
	}
	if err != nil {
		return err
	}
	if cs.dur > 0 { // the pre-sampling pass is a setup span of its own
		s0 = cs.start + cs.dur
	}
	if err := t.guard.calibrate(t.load); err != nil {
		return err
	}
	plan, err := planBudget(&budgetPlanner{cfg: &t.cfg, mem: &t.mem, inf: t.inf, guard: t.guard, model: t.model, train: t.split.Train, f: t.ds.NumFeatures})
	if err != nil {
		return err
	}
	gas, note, err := fitGASParts(gasFit{cfg: &t.cfg, g: t.ds.Graph, mem: &t.mem, features: t.ds.NumFeatures, classes: t.ds.NumClasses})
	if err != nil {
		return err
	}
	t.gas = gas
	if note != "" {
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
	t.eval = t.evaluator()
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
		if err := checkTrained(lp.res, t.policy, epoch); err != nil {
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
func checkTrained(res *Result, policy *oomPolicy, epoch int) error {
	if res.Batches > 0 {
		return nil
	}
	n, last := policy.skips()
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
		r := t.eval.evaluate(t.dev, t.model, profile.LaneCompute, epoch)
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
// and the recorded spans; without the uncut reference it does nothing.
func (t *trainer) uncutEval(res *Result) error {
	if !t.eval.keepParams || t.best == nil {
		return nil
	}
	test, val, err := t.eval.uncut(t.dev, t.model, t.best)
	if err != nil {
		return err
	}
	res.TestAccUncut, res.ValAccUncut = &test, &val
	return nil
}
