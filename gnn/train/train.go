package train

import (
	"context"
	"errors"
	"fmt"
	"math"
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

	inf *inference // layer-wise inference for evaluation

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
	t.inf = newInference(cfg, ds, t.x, t.deg, t.isVal, &t.mem, rec)
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
	if chunks, err := t.inf.chunks(t.model); err != nil {
		return nil, fmt.Errorf("inference blocks: %w", err)
	} else if _, err := t.inf.inputAggregate(t.dev, t.model, chunks); err != nil {
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
	ov := &overlapEval{t: t, deliver: func(st *EpochStat, r evalResult) {
		t.record(res, st, r)
		if onEpoch != nil {
			onEpoch(*st)
		}
	}}
	// The evaluation in flight uses the model's device and the recorder:
	// wait for it on every way out, before the caller frees them.
	defer ov.drain()
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
			if err := ov.finish(); err != nil {
				return nil, err
			}
			if patienceOut() {
				res.History = append(res.History, st) // trained, not evaluated
				if onEpoch != nil {
					onEpoch(st)
				}
				break
			}
			if err := ov.start(st); err != nil {
				return nil, err
			}
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
	if err := ov.finish(); err != nil {
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
	req := inferRequest{dev: dev, model: m, epoch: epoch, ce: &valCE{isVal: t.isVal, y: t.ds.Y}}
	if t.gas != nil && m == t.model {
		req.keep = func(l int, h []float32) error { return t.gas.refresh(t, epoch, l, h) }
	}
	preds, err := t.inf.run(req)
	if err != nil {
		t.policy.abort(err, epoch, -1)
	}
	t.rec.Span(profile.StageEval, lane, epoch, 0, t0, t.rec.Now()-t0)
	if err != nil {
		return evalResult{err: err}
	}
	valLoss := req.ce.loss()
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
		release := acquire(t.mem.gate, t.rec, t.trainGrant(p), profile.LaneCompute, p.epoch, p.index)
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
