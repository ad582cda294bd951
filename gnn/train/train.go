package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// EpochStat is what one epoch produced.
type EpochStat struct {
	Epoch     int     `json:"epoch"` // counts from 1
	Loss      float64 `json:"loss"`  // mean training loss over the epoch's batches
	TrainAcc  float64 `json:"train_acc"`
	Evaluated bool    `json:"evaluated"`
	ValAcc    float64 `json:"val_acc"`
	ValLoss   float64 `json:"val_loss"` // mean cross-entropy of the validation nodes
	TestAcc   float64 `json:"test_acc"`
	Batches   int     `json:"batches"`
	TrainS    float64 `json:"train_s"` // seconds spent training
	EvalS     float64 `json:"eval_s"`  // seconds spent evaluating
}

// Result summarizes a finished run.
type Result struct {
	TestAcc float64 `json:"test_acc"` // at the selected epoch (Config.Select)
	// Stage figures, from the recorded spans (absent without a recorder):
	// seconds per stage, time the trainer waited for data, overlap and
	// pipeline efficiency (see profile.Summary for the definitions).
	StageS     map[string]float64 `json:"stage_s,omitempty"`
	DataWaitS  float64            `json:"data_wait_s"`
	Overlap    float64            `json:"overlap"`
	Efficiency float64            `json:"efficiency"`
	// ValAcc and ValLoss are the validation accuracy and cross-entropy of
	// the selected epoch, BestEpoch: the highest accuracy by default, the
	// lowest loss with Select val-loss.
	ValAcc     float64 `json:"val_acc"`
	ValLoss    float64 `json:"val_loss"`
	BestEpoch  int     `json:"best_epoch"`
	Epochs     int     `json:"epochs"`  // trained: fewer than configured when Patience stopped the run
	EpochS     float64 `json:"epoch_s"` // mean wall seconds per epoch, evaluation included
	SetupS     float64 `json:"setup_s"` // one-time setup before the first epoch (not in train_s)
	TrainS     float64 `json:"train_s"` // wall seconds of the whole training loop
	EvalS      float64 `json:"eval_s"`  // of which evaluating
	PeakBytes  int64   `json:"peak_bytes"`
	ParamBytes int64   `json:"param_bytes"`
	Steps      int     `json:"steps"` // optimizer steps
	// Per-batch device memory of training batches: each batch's peak is
	// the resident bytes (parameters, gradients, optimizer moments) plus
	// the batch's input plus the step's own peak (see the mem events).
	MaxBatchPeakBytes int64 `json:"max_batch_peak_bytes"`
	P99BatchPeakBytes int64 `json:"p99_batch_peak_bytes"`
	OOMCount          int   `json:"oom_count"`     // allocations refused by the budget (batches skipped)
	GuardActions      int   `json:"guard_actions"` // batches the memory guard re-sampled, split or cut
	// PredictorMAPE is the mean absolute percentage error (a fraction) of
	// the peak predictor's predictions made after calibration, absent when
	// none was made.
	PredictorMAPE *float64 `json:"predictor_mape,omitempty"`
	EvalCutEdges  int64    `json:"eval_cut_edges,omitempty"` // inference edges dropped per evaluation
	// TestAccUncut and ValAccUncut are the selected epoch's weights
	// evaluated once more, after training, on the whole graph: what the
	// accuracy is without EvalCut's cut, on the same model, so that
	// TestAcc - TestAccUncut is what the cut costs. Present only with
	// EvalCut and no memory budget (a budget's cuts are what lets the
	// inference fit at all).
	TestAccUncut *float64 `json:"test_acc_uncut,omitempty"`
	ValAccUncut  *float64 `json:"val_acc_uncut,omitempty"`
	// GAS training (sampler gas): the mean and largest age in optimizer
	// steps of the history rows pulled over the run, the histories' relative
	// error at the last refresh (largest over layers) and their host bytes.
	StalenessMean *float64    `json:"staleness_mean,omitempty"`
	StalenessMax  *int64      `json:"staleness_max,omitempty"`
	HistoryRelErr *float64    `json:"history_rel_err,omitempty"`
	HistoryBytes  int64       `json:"history_bytes,omitempty"`
	History       []EpochStat `json:"history,omitempty"`
}

// Options are the optional parts of a run.
type Options struct {
	// Recorder receives every stage span and metric of the run; nil turns
	// recording off. Run does not close it.
	Recorder *profile.Recorder
	// OnEpoch, if set, is called after every epoch (with overlapped
	// evaluation, once the epoch's evaluation has finished).
	OnEpoch func(EpochStat)
}

// Run trains a model on ds with the given split on dev. It stops early with
// ctx's error when ctx is canceled.
func Run(ctx context.Context, cfg Config, ds *data.Dataset, split *data.Split, dev device.Device, opt Options) (*Result, error) {
	t, err := newTrainer(cfg, ds, split, dev, opt.Recorder)
	if err != nil {
		return nil, err
	}
	t.deviceClock()
	defer t.close()
	return t.run(ctx, opt.OnEpoch)
}

type trainer struct {
	cfg     Config
	ds      *data.Dataset
	split   *data.Split
	dev     device.Device
	x       []float32 // features as the model sees them (normalized or not)
	deg     []float32 // degree + 1 per node, for GCN normalization
	model   *nn.Model
	opt     *nn.Optimizer
	sampler *sample.Neighbor
	rec     *profile.Recorder
	inline  *sample.Worker // baseline: the training goroutine's sampler state

	evalMu     sync.Mutex
	evalCache  []evalChunk // inference blocks, kept between evaluations
	agg0       []float32   // first layer's input aggregate, kept between evaluations
	noAggCache bool        // tests: always aggregate the input afresh

	fullX   *tensor.Tensor // full-batch: all features on the device
	fullBlk []*graph.Block // full-batch: one prepared block per layer

	mem    memState   // per-batch memory accounting and the guard
	policy *oomPolicy // what a refused allocation and the guard do

	gas *gasState // GNNAutoScale training (sampler gas), or nil

	isVal []bool    // per node: in the validation set
	sel   *selector // the reported epoch and early stopping

	// best is a host copy of the selected epoch's weights, one slice per
	// model parameter in Params order (kept only when uncutReference).
	best [][]float32
}

// uncutReference reports whether the run evaluates its selected weights on
// the uncut graph at the end (see Result.TestAccUncut).
func (t *trainer) uncutReference() bool {
	return t.cfg.EvalCut > 0 && t.mem.budget == 0
}

func newTrainer(cfg Config, ds *data.Dataset, split *data.Split, dev device.Device, rec *profile.Recorder) (*trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if split == nil || len(split.Train) == 0 {
		return nil, errors.New("training split is empty")
	}
	for _, set := range [][]int32{split.Train, split.Valid, split.Test} {
		for _, v := range set {
			if v < 0 || int(v) >= ds.NumNodes() || ds.Y[v] < 0 {
				return nil, fmt.Errorf("split node %d is out of range or unlabeled", v)
			}
		}
	}
	t := &trainer{cfg: cfg, ds: ds, split: split, dev: dev, rec: rec, sel: newSelector(cfg.Select, cfg.Patience), policy: newOOMPolicy(cfg, rec)}
	t.isVal = make([]bool, ds.NumNodes())
	for _, v := range split.Valid {
		t.isVal[v] = true
	}
	t.x = prepareFeatures(ds.X, ds.NumFeatures, cfg.Features)
	g := ds.Graph
	t.deg = make([]float32, g.N)
	for v := 0; v < g.N; v++ {
		t.deg[v] = float32(g.Indptr[v+1]-g.Indptr[v]) + 1
	}
	var err error
	t.model, err = nn.New(dev, nn.Spec{
		Kind: cfg.Model, In: ds.NumFeatures, Hidden: cfg.Hidden, Out: ds.NumClasses, Layers: cfg.Layers,
		Dropout: float32(cfg.Dropout), InputDropout: cfg.Model == nn.KindGCN || cfg.Model == nn.KindGAT, Seed: cfg.Seed,
		Heads: cfg.Heads, AttnDropout: float32(cfg.AttnDropout),
		Alpha: float32(cfg.Alpha), Theta: float32(cfg.Theta), Activation: cfg.Activation,
	})
	if err != nil {
		return nil, err
	}
	t.opt = nn.NewAdam(float32(cfg.LR), float32(cfg.WeightDecay))
	if cfg.WDConv != nil {
		t.opt.ConvWeightDecay = float32(*cfg.WDConv)
	}
	if cfg.WDOut != nil {
		wd := float32(*cfg.WDOut)
		t.opt.OutWeightDecay = &wd
	}
	t.opt.ClipNorm = float32(cfg.ClipNorm)
	if err := t.initMem(); err != nil {
		t.close()
		return nil, err
	}
	if cfg.Sampler == SamplerNeighbor {
		if t.sampler, err = sample.NewNeighbor(g, cfg.Fanouts, cfg.Seed); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

func (t *trainer) close() {
	t.closeHistories()
	if t.fullX != nil {
		t.dev.Free(t.fullX)
		t.fullX = nil
	}
	if t.model != nil {
		t.model.Free(t.dev)
		t.model = nil
	}
}

// prepareFeatures applies the feature normalization mode.
func prepareFeatures(x []float32, f int, mode string) []float32 {
	if mode == "auto" {
		mode = "row"
		for _, v := range x {
			if v < 0 {
				mode = "none"
				break
			}
		}
	}
	if mode != "row" {
		return x
	}
	out := make([]float32, len(x))
	for r := 0; r*f < len(x); r++ {
		row := x[r*f : (r+1)*f]
		var s float64
		for _, v := range row {
			s += float64(v)
		}
		if s == 0 {
			continue
		}
		inv := float32(1 / s)
		for j, v := range row {
			out[r*f+j] = v * inv
		}
	}
	return out
}

func (t *trainer) run(ctx context.Context, onEpoch func(EpochStat)) (*Result, error) {
	res := &Result{Epochs: t.cfg.Epochs, BestEpoch: -1, ValAcc: -1, ParamBytes: t.model.ParamBytes()}
	rec := t.rec
	// One-time setup before the first epoch, the same for every schedule:
	// the memory guard's calibration and the inference blocks and first-
	// layer input aggregate that every evaluation reuses. It is a setup
	// span: in the wall time, not in any epoch.
	s0, w0 := rec.Now(), time.Now()
	if err := t.calibrate(); err != nil {
		return nil, err
	}
	if chunks, err := t.evalChunks(t.model); err != nil {
		return nil, fmt.Errorf("inference blocks: %w", err)
	} else if _, err := t.inputAggregate(t.dev, t.model, chunks); err != nil {
		return nil, fmt.Errorf("input aggregate: %w", err)
	}
	if t.cfg.Sampler == SamplerGAS {
		if err := t.setupGAS(); err != nil {
			return nil, fmt.Errorf("gas setup: %w", err)
		}
	}
	rec.Span(profile.StageSetup, profile.LaneCompute, 0, 0, s0, rec.Now()-s0)
	res.SetupS = time.Since(w0).Seconds()
	start := time.Now()
	var pipe *pipeline
	if t.cfg.Sampler == SamplerNeighbor && t.cfg.SamplerWorkers > 0 {
		pipe = t.startPipeline(ctx)
		defer pipe.stop()
	}
	// pending is the epoch whose overlapped evaluation is in flight.
	var pending *EpochStat
	var evalDone chan evalResult
	finishEval := func() error {
		if pending == nil {
			return nil
		}
		r := <-evalDone
		if r.err != nil {
			return fmt.Errorf("epoch %d evaluation: %w", pending.Epoch, r.err)
		}
		t.record(res, pending, r)
		if onEpoch != nil {
			onEpoch(*pending)
		}
		pending = nil
		return nil
	}
	// patienceOut reports whether Patience epochs have passed since the
	// selected epoch, as of the last recorded evaluation.
	patienceOut := t.sel.stop
	ran := 0 // epochs trained
	for epoch := 1; epoch <= t.cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := EpochStat{Epoch: epoch}
		t0 := time.Now()
		var err error
		switch {
		case t.cfg.Sampler == SamplerFull:
			err = t.fullEpoch(&st)
		case t.gas != nil:
			err = t.gasEpoch(ctx, epoch, &st)
		case pipe != nil:
			err = t.pipelinedEpoch(ctx, pipe, epoch, &st)
		default:
			err = t.neighborEpoch(ctx, epoch, &st)
		}
		if err != nil {
			return nil, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		st.TrainS = time.Since(t0).Seconds()
		ran = epoch
		if rss, err := memory.HostRSS(); err == nil {
			rec.Metric("host_rss", epoch, -1, float64(rss))
		}
		rec.Metric("loss", epoch, -1, st.Loss)
		rec.Metric("train_acc", epoch, -1, st.TrainAcc)
		if !(epoch%t.cfg.EvalEvery == 0 || epoch == t.cfg.Epochs) {
			res.History = append(res.History, st)
			if onEpoch != nil {
				onEpoch(st)
			}
			rec.Flush()
			continue
		}
		if t.cfg.OverlapEval {
			// At most one evaluation in flight: the previous epoch's must
			// finish before this epoch's snapshot is evaluated.
			if err := finishEval(); err != nil {
				return nil, err
			}
			if patienceOut() {
				res.History = append(res.History, st) // trained, not evaluated
				if onEpoch != nil {
					onEpoch(st)
				}
				break
			}
			snap, err := t.model.Snapshot(t.dev)
			if err != nil {
				return nil, fmt.Errorf("epoch %d: snapshot for evaluation: %w", epoch, err)
			}
			st := st
			pending = &st
			evalDone = make(chan evalResult, 1)
			go func(epoch int) {
				// The snapshot is freed before the result is delivered,
				// so that the next epoch's snapshot never coexists with
				// it (the memory gate counts one) and a finished run has
				// nothing left on the device.
				r := t.evaluate(t.dev, snap, profile.LaneEval, epoch)
				snap.Free(t.dev)
				evalDone <- r
			}(epoch)
			rec.Flush()
			continue
		}
		r := t.evaluate(t.dev, t.model, profile.LaneCompute, epoch)
		if r.err != nil {
			return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, r.err)
		}
		t.record(res, &st, r)
		if onEpoch != nil {
			onEpoch(st)
		}
		rec.Flush()
		if patienceOut() {
			break
		}
	}
	if err := finishEval(); err != nil {
		return nil, err
	}
	res.Epochs = ran
	res.TrainS = time.Since(start).Seconds()
	res.EpochS = res.TrainS / float64(max(ran, 1))
	res.PeakBytes = t.dev.Mem().Stats().Peak
	t.memResult(res)
	// After the peak is read: the reference evaluation is not the run's.
	if err := t.uncutEval(res); err != nil {
		return nil, fmt.Errorf("uncut reference evaluation: %w", err)
	}
	res.Steps = t.opt.Steps()
	t.gasResult(res)
	if rec != nil {
		rec.Flush()
		sum := rec.Summary()
		res.StageS = map[string]float64{}
		for name, v := range sum.Stages {
			res.StageS[name] = v
		}
		res.DataWaitS, res.Overlap, res.Efficiency = sum.DataWaitS, sum.Overlap, sum.Efficiency
	}
	return res, nil
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
// validation loss.
func (t *trainer) evaluate(dev device.Device, m *nn.Model, lane string, epoch int) evalResult {
	t0 := t.rec.Now()
	w0 := time.Now()
	preds, valLoss, err := t.inferEpoch(dev, m, epoch)
	t.rec.Span(profile.StageEval, lane, epoch, 0, t0, t.rec.Now()-t0)
	if err != nil {
		return evalResult{err: err}
	}
	r := evalResult{
		val:     accuracy(preds, t.ds.Y, t.split.Valid),
		test:    accuracy(preds, t.ds.Y, t.split.Test),
		valLoss: valLoss,
		secs:    time.Since(w0).Seconds(),
	}
	if t.uncutReference() {
		r.params = hostParams(dev, m)
	}
	return r
}

// hostParams copies m's weights to the host, one slice per parameter in
// Params order.
func hostParams(dev device.Device, m *nn.Model) [][]float32 {
	ps := m.Params()
	out := make([][]float32, len(ps))
	for i, p := range ps {
		out[i] = make([]float32, p.W.Len())
		dev.CopyToHost(out[i], p.W)
	}
	return out
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

// accuracy is the fraction of nodes whose prediction equals the label
// (NaN for an empty set).
func accuracy(pred, y []int32, nodes []int32) float64 {
	if len(nodes) == 0 {
		return math.NaN()
	}
	ok := 0
	for _, v := range nodes {
		if pred[v] == y[v] {
			ok++
		}
	}
	return float64(ok) / float64(len(nodes))
}

func (t *trainer) ctx(dev device.Device) *nn.Context {
	return &nn.Context{Dev: dev, Train: true, Seed: t.cfg.Seed, Step: uint64(t.opt.Steps())}
}

// step runs forward, loss on rows (indices into the logits) and backward,
// then one optimizer update on dev (the trainer's device, or a scoped view
// of it that measures the step's own peak), recording a train span with its
// forward, backward and step children on the compute lane.
func (t *trainer) step(dev device.Device, epoch, batch int, blocks []*graph.Block, x *tensor.Tensor, rows []int32, labels []int32) (loss float64, correct int, err error) {
	return t.stepWith(dev, epoch, batch, func(c *nn.Context) (*tensor.Tensor, error) {
		return t.model.Forward(c, blocks, x)
	}, t.model.Backward, rows, labels)
}

// stepWith is step with the model's forward and backward passes given as
// functions (GAS training runs its own).
func (t *trainer) stepWith(dev device.Device, epoch, batch int, forward func(*nn.Context) (*tensor.Tensor, error), backward func(*nn.Context, *tensor.Tensor) error, rows []int32, labels []int32) (loss float64, correct int, err error) {
	rec := t.rec
	t0 := rec.Now()
	defer func() { rec.Span(profile.StageTrain, profile.LaneCompute, epoch, batch, t0, rec.Now()-t0) }()
	defer t.gpuSpan(dev, profile.StageGPUTrain, epoch, batch)()
	c := t.ctx(dev)
	logits, err := forward(c)
	if err != nil {
		return 0, 0, err
	}
	defer dev.Free(logits)
	grad, err := dev.Alloc(logits.Rows, logits.Cols)
	if err != nil {
		t.model.Release(c)
		return 0, 0, err
	}
	defer dev.Free(grad)
	if rows == nil { // every logit row is a target
		loss, correct = dev.SoftmaxCrossEntropy(logits, labels, grad)
	} else {
		sel, err := dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			t.model.Release(c)
			return 0, 0, err
		}
		defer dev.Free(sel)
		gsel, err := dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			t.model.Release(c)
			return 0, 0, err
		}
		defer dev.Free(gsel)
		dev.Gather(sel, logits, rows)
		loss, correct = dev.SoftmaxCrossEntropy(sel, labels, gsel)
		dev.ScatterAdd(grad, gsel, rows)
	}
	t1 := rec.Now()
	rec.Span(profile.StageForward, profile.LaneCompute, epoch, batch, t0, t1-t0)
	if err := backward(c, grad); err != nil {
		return 0, 0, err
	}
	t2 := rec.Now()
	rec.Span(profile.StageBackward, profile.LaneCompute, epoch, batch, t1, t2-t1)
	t.opt.Step(dev, t.model.Params())
	rec.Span(profile.StageStep, profile.LaneCompute, epoch, batch, t2, rec.Now()-t2)
	rec.Metric("batch_loss", epoch, batch, loss)
	return loss, correct, nil
}

func (t *trainer) labelsOf(nodes []int32) []int32 {
	l := make([]int32, len(nodes))
	for i, v := range nodes {
		l[i] = t.ds.Y[v]
	}
	return l
}

// fullEpoch is one full-batch step over the whole graph.
func (t *trainer) fullEpoch(st *EpochStat) error {
	if t.fullX == nil {
		t0 := t.rec.Now()
		g := t.ds.Graph
		x, err := t.dev.Alloc(g.N, t.ds.NumFeatures)
		if err != nil {
			return err
		}
		t.dev.CopyFromHost(x, t.x)
		t.fullX = x
		t.rec.Span(profile.StageTransfer, profile.LaneCompute, st.Epoch, 0, t0, t.rec.Now()-t0)
		all := make([]int32, g.N)
		for i := range all {
			all[i] = int32(i)
		}
		blk := t.model.PrepareBlock(graph.FullBlock(g), all, t.deg)
		t.fullBlk = make([]*graph.Block, t.cfg.Layers)
		for l := range t.fullBlk {
			t.fullBlk[l] = blk
		}
	}
	scope := device.NewScope()
	loss, correct, err := t.step(device.Scoped(t.dev, scope), st.Epoch, 0, t.fullBlk, t.fullX, t.split.Train, t.labelsOf(t.split.Train))
	if err != nil {
		t.policy.abort(err, st.Epoch, 0)
		return err
	}
	t.recordTrainMem(st.Epoch, 0, t.fullX.Bytes(), scope.Peak(), 0, memory.Shape{})
	st.Loss, st.TrainAcc, st.Batches = loss, float64(correct)/float64(len(t.split.Train)), 1
	return nil
}

// neighborEpoch is the baseline schedule: each batch is sampled, gathered
// and trained strictly in turn on the training goroutine.
func (t *trainer) neighborEpoch(ctx context.Context, epoch int, st *EpochStat) error {
	batches, err := sample.Batches(t.split.Train, t.cfg.BatchSize, t.cfg.Seed, epoch, true)
	if err != nil {
		return err
	}
	if t.inline == nil {
		t.inline = t.sampler.NewWorker()
	}
	acc := epochAcc{st: st}
	for i, targets := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := t.prepare(t.inline, epoch, i, targets, profile.LaneCompute)
		if err := acc.train(t, p); err != nil {
			return err
		}
	}
	acc.finish()
	return nil
}

// epochAcc accumulates an epoch's loss and accuracy over its batches.
type epochAcc struct {
	st            *EpochStat
	lossSum       float64
	correct, seen int
}

// train runs one prepared batch (through the memory guard, which may
// replace it by other draws or parts) and frees it.
func (a *epochAcc) train(t *trainer, p *prepared) error {
	parts, err := t.guard(p)
	if err != nil {
		return fmt.Errorf("batch %d: %w", p.index, err)
	}
	for _, q := range parts {
		if err := a.trainOne(t, q); err != nil {
			return err
		}
	}
	return nil
}

// trainOne trains one prepared batch and frees it, measuring its peak; an
// out-of-memory error is recorded and, with OnOOM skip, skips the batch.
func (a *epochAcc) trainOne(t *trainer, p *prepared) error {
	if t.mem.gate != nil {
		// Overlapped evaluation under the guard: the batch's predicted
		// bytes are granted before its features are gathered.
		release := t.acquire(t.trainGrant(p), profile.LaneCompute, p.epoch, p.index)
		defer release()
	}
	if p.lazy {
		q := t.load(p.raw, p.epoch, p.index, profile.LaneCompute, t.rec.Now())
		q.predicted = p.predicted
		p = q
	}
	if p.err != nil {
		p.free(t.dev)
		if err := t.policy.batchFailed(p.err, p.epoch, p.index); err != nil {
			return fmt.Errorf("batch %d: %w", p.index, err)
		}
		return nil
	}
	scope := device.NewScope()
	loss, ok, err := t.step(device.Scoped(t.dev, scope), p.epoch, p.index, p.blocks, p.x, nil, p.labels)
	in := p.inBytes()
	p.free(t.dev)
	if err != nil {
		if err := t.policy.batchFailed(err, p.epoch, p.index); err != nil {
			return fmt.Errorf("batch %d: %w", p.index, err)
		}
		return nil
	}
	t.recordTrainMem(p.epoch, p.index, in, scope.Peak(), p.predicted, shapeOf(p.raw))
	a.lossSum += loss * float64(len(p.labels))
	a.correct += ok
	a.seen += len(p.labels)
	a.st.Batches++
	return nil
}

func (a *epochAcc) finish() {
	if a.seen > 0 {
		a.st.Loss = a.lossSum / float64(a.seen)
		a.st.TrainAcc = float64(a.correct) / float64(a.seen)
	}
}

// evalChunk is one block of layer-wise inference: destinations [lo, hi)
// with all their neighbors as sources.
type evalChunk struct {
	lo, hi int
	blk    *graph.Block // prepared for the model
	src    []int32
}

// minEvalChunk is the smallest inference chunk a budget makes: below it,
// edges are cut instead.
const minEvalChunk = 256

// maxCachedEvalEdges bounds the edges of inference blocks kept between
// evaluations (about 8 bytes each); larger graphs rebuild them each time.
const maxCachedEvalEdges = 64 << 20

// evalChunks returns the inference blocks, built once and reused by every
// evaluation when the graph is small enough. The blocks are the same for
// every layer and every evaluation: they depend only on the graph.
func (t *trainer) evalChunks(m *nn.Model) ([]evalChunk, error) {
	t.evalMu.Lock()
	defer t.evalMu.Unlock()
	if t.evalCache != nil {
		return t.evalCache, nil
	}
	g := t.ds.Graph
	scratch := sample.NewScratch(g.N)
	var chunks []evalChunk
	size := t.cfg.EvalChunk
	if t.mem.budget > 0 {
		// Chunks whose destination rows alone would not fit the budget are
		// made smaller; edges are cut from those that still do not fit.
		room := t.mem.budget - t.evalResident()
		for size > 1 && evalPeak(m, size, size) > room {
			size /= 2
		}
	}
	// Consecutive chunks of up to size destinations; with a budget, each
	// as large as its full neighborhood allows (see nextEvalChunk), edges
	// cut from those that still do not fit.
	var cut int64 // edges dropped from all chunks
	want := size
	for lo := 0; lo < g.N; {
		ch, next, err := t.nextEvalChunk(m, scratch, lo, want)
		if err != nil {
			return nil, err
		}
		t.mem.mu.Lock()
		t.mem.evalCut += ch.dropped
		t.mem.mu.Unlock()
		cut += ch.dropped
		chunks = append(chunks, ch.evalChunk)
		lo, want = ch.hi, min(size, next)
	}
	t.prepareEvalBlocks(m, chunks, cut > 0)
	if g.NumEdges() <= maxCachedEvalEdges {
		t.evalCache = chunks
	}
	return chunks, nil
}

// maxCachedAggregateBytes bounds the host memory kept for the first
// layer's input aggregate.
const maxCachedAggregateBytes = 2 << 30

// inputAggregate returns the first layer's aggregation of the input
// features over every node's full neighborhood (N×F on the host), computed
// once and reused by every evaluation, or nil when the first layer
// transforms before aggregating (its aggregate then depends on the weights)
// or the aggregate would be too large to keep. The features never change,
// so evaluations from it are exactly those computed from scratch.
func (t *trainer) inputAggregate(dev device.Device, m *nn.Model, chunks []evalChunk) ([]float32, error) {
	p, ok := m.Layers[0].(nn.Precomputable)
	f := t.ds.NumFeatures
	if !ok || !p.AggregatesFirst() || t.noAggCache || int64(t.ds.NumNodes())*int64(f)*4 > maxCachedAggregateBytes {
		return nil, nil
	}
	t.evalMu.Lock()
	defer t.evalMu.Unlock()
	if t.agg0 != nil {
		return t.agg0, nil
	}
	agg := make([]float32, t.ds.NumNodes()*f)
	c := &nn.Context{Dev: dev}
	for _, ch := range chunks {
		release := t.acquire(4*int64(f)*int64(len(ch.src)+ch.hi-ch.lo), profile.LaneEval, 0, ch.lo)
		x, err := dev.Alloc(len(ch.src), f)
		if err != nil {
			release()
			return nil, err
		}
		dev.GatherHost(x, t.x, ch.src)
		a, err := p.Aggregate(c, ch.blk, x)
		dev.Free(x)
		if err == nil {
			dev.CopyToHost(agg[ch.lo*f:ch.hi*f], a)
			dev.Free(a)
		}
		release()
		if err != nil {
			return nil, err
		}
	}
	t.agg0 = agg
	return agg, nil
}

// inferFirstFromAggregate runs the first layer of layer-wise inference from
// the precomputed input aggregate: per chunk, only the destinations' own
// rows and their aggregate move to the device, and no aggregation runs.
func (t *trainer) inferFirstFromAggregate(dev0 device.Device, m *nn.Model, epoch int, chunks []evalChunk, agg []float32, out int, next []float32, preds []int32, last bool, ce *valCE, peaks []int64) error {
	f := t.ds.NumFeatures
	for i, ch := range chunks {
		release := t.acquire(t.evalGrant(m, i, ch), profile.LaneEval, epoch, i)
		err := t.inferFirstChunk(dev0, m, ch, agg, f, out, next, preds, last, ce, &peaks[i])
		release()
		if err != nil {
			return err
		}
	}
	return nil
}

// inferFirstChunk is inferFirstFromAggregate for one chunk, raising *peak
// to the chunk's own peak.
func (t *trainer) inferFirstChunk(dev0 device.Device, m *nn.Model, ch evalChunk, agg []float32, f, out int, next []float32, preds []int32, last bool, ce *valCE, peak *int64) error {
	scope := device.NewScope()
	dev := device.Scoped(dev0, scope)
	c := &nn.Context{Dev: dev}
	n := ch.hi - ch.lo
	a, err := dev.Alloc(n, f)
	if err != nil {
		return err
	}
	xd, err := dev.Alloc(n, f)
	if err != nil {
		dev.Free(a)
		return err
	}
	dev.CopyFromHost(a, agg[ch.lo*f:ch.hi*f])
	dev.CopyFromHost(xd, t.x[ch.lo*f:ch.hi*f])
	y, err := m.FromAggregate(c, 0, a, xd)
	dev.Free(a)
	dev.Free(xd)
	if err != nil {
		return fmt.Errorf("layer 1: %w", err)
	}
	storeChunk(dev, y, ch, out, next, preds, last, ce)
	*peak = max(*peak, scope.Peak())
	return nil
}

// infer runs exact layer-wise inference over every node with model m: layer
// by layer, each in chunks of destinations with all their neighbors,
// keeping the intermediate embeddings on the host. It returns each node's
// predicted class.
func (t *trainer) infer(dev device.Device, m *nn.Model) ([]int32, error) {
	preds, _, err := t.inferEpoch(dev, m, 0)
	return preds, err
}

// inferEpoch is infer for the evaluation of epoch, also returning the
// validation nodes' mean cross-entropy, recording a mem event (phase eval)
// per chunk, and an oom event when the budget refuses one.
func (t *trainer) inferEpoch(dev0 device.Device, m *nn.Model, epoch int) ([]int32, float64, error) {
	var keep func(l int, h []float32) error
	if t.gas != nil && m == t.model {
		keep = func(l int, h []float32) error { return t.gas.refresh(t, epoch, l, h) }
	}
	ce := &valCE{isVal: t.isVal, y: t.ds.Y}
	preds, err := t.inferChunks(dev0, m, epoch, keep, ce)
	if err != nil {
		t.policy.abort(err, epoch, -1)
		return nil, 0, err
	}
	return preds, ce.loss(), nil
}

// inferChunks runs layer-wise inference; keep, if not nil, receives each
// hidden layer's output (N×hidden on the host, original node order) once
// the layer is complete, and ce, if not nil, the last layer's logits.
func (t *trainer) inferChunks(dev0 device.Device, m *nn.Model, epoch int, keep func(l int, h []float32) error, ce *valCE) (_ []int32, err error) {
	g := t.ds.Graph
	h, dim := t.x, t.ds.NumFeatures
	preds := make([]int32, g.N)
	chunks, err := t.evalChunks(m)
	if err != nil {
		return nil, err
	}
	peaks := make([]int64, len(chunks))
	defer func() {
		if err != nil {
			return
		}
		t.sawEval(peaks)
		res := t.evalResident()
		for i, ch := range chunks {
			var pred int64
			if t.mem.budget > 0 {
				pred = res + evalPeak(m, ch.blk.NumSrc, ch.blk.NumDst)
			}
			t.rec.Mem(epoch, i, profile.PhaseEval, res+peaks[i], dev0.Mem().Stats().Live, t.mem.budget, pred)
		}
	}()
	last := len(m.Layers) - 1
	for l, layer := range m.Layers {
		_, out := layer.Dims()
		var next []float32
		if l < last {
			next = make([]float32, g.N*out)
		}
		if l == 0 {
			agg, err := t.inputAggregate(dev0, m, chunks)
			if err != nil {
				return nil, err
			}
			if agg != nil {
				if err = t.inferFirstFromAggregate(dev0, m, epoch, chunks, agg, out, next, preds, l == last, ce, peaks); err != nil {
					return nil, err
				}
				h, dim = next, out
				if keep != nil && l < last {
					if err := keep(l, h); err != nil {
						return nil, err
					}
				}
				continue
			}
		}
		for i, ch := range chunks {
			release := t.acquire(t.evalGrant(m, i, ch), profile.LaneEval, epoch, i)
			err := inferChunk(dev0, m, l, ch, h, dim, out, next, preds, l == last, ce, &peaks[i])
			release()
			if err != nil {
				return nil, err
			}
		}
		h, dim = next, out
		if keep != nil && l < last {
			if err := keep(l, h); err != nil {
				return nil, err
			}
		}
	}
	return preds, nil
}

// storeChunk keeps a chunk's layer output y and frees it: at the last
// layer its predicted classes go to preds (and its cross-entropy to ce, if
// not nil), else its rows (out columns) to next.
func storeChunk(dev device.Device, y *tensor.Tensor, ch evalChunk, out int, next []float32, preds []int32, last bool, ce *valCE) {
	if last {
		dev.Argmax(preds[ch.lo:ch.hi], y)
		ce.add(dev, y, ch.lo, ch.hi)
	} else {
		dev.CopyToHost(next[ch.lo*out:ch.hi*out], y)
	}
	dev.Free(y)
}

// inferChunk runs layer l of layer-wise inference on one chunk, from the
// layer's input h (dim columns, on the host) into next (out columns) or,
// at the last layer, preds (and ce, if not nil), raising *peak to the
// chunk's own peak.
func inferChunk(dev0 device.Device, m *nn.Model, l int, ch evalChunk, h []float32, dim, out int, next []float32, preds []int32, last bool, ce *valCE, peak *int64) error {
	scope := device.NewScope()
	dev := device.Scoped(dev0, scope)
	c := &nn.Context{Dev: dev}
	x, err := dev.Alloc(len(ch.src), dim)
	if err != nil {
		return err
	}
	dev.GatherHost(x, h, ch.src)
	y, err := m.ForwardLayer(c, l, ch.blk, x)
	dev.Free(x)
	if err != nil {
		return fmt.Errorf("layer %d: %w", l+1, err)
	}
	storeChunk(dev, y, ch, out, next, preds, last, ce)
	*peak = max(*peak, scope.Peak())
	return nil
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
	g := t.ds.Graph
	scratch := sample.NewScratch(g.N)
	var chunks []evalChunk
	for lo := 0; lo < g.N; lo += t.cfg.EvalChunk {
		hi := min(g.N, lo+t.cfg.EvalChunk)
		blk, src, err := rangeBlock(g, lo, hi, scratch)
		if err != nil {
			return err
		}
		chunks = append(chunks, evalChunk{lo: lo, hi: hi, blk: blk, src: src})
	}
	t.prepareEvalBlocks(m, chunks, false)
	preds := make([]int32, g.N)
	var peak int64
	h, dim := t.x, t.ds.NumFeatures
	last := len(m.Layers) - 1
	for l, layer := range m.Layers {
		_, out := layer.Dims()
		var next []float32
		if l < last {
			next = make([]float32, g.N*out)
		}
		for _, ch := range chunks {
			if err := inferChunk(t.dev, m, l, ch, h, dim, out, next, preds, l == last, nil, &peak); err != nil {
				return err
			}
		}
		h, dim = next, out
	}
	test, val := accuracy(preds, t.ds.Y, t.split.Test), accuracy(preds, t.ds.Y, t.split.Valid)
	res.TestAccUncut, res.ValAccUncut = &test, &val
	return nil
}
