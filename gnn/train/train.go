package train

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
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
	// Cache is the feature cache's outcome for the epoch's training
	// batches (Config.CacheBytes; nil without a cache): input rows hit
	// and missed, bytes moved host-to-device, hit rate.
	Cache *featcache.Outcome `json:"cache,omitempty"`
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
	// Batches is the training batches trained over the run (parts of a
	// split batch count one each); SkippedBatches those OOMSkip dropped.
	// The run trained Batches of Batches+SkippedBatches.
	Batches        int `json:"batches"`
	SkippedBatches int `json:"skipped_batches"`
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
	StalenessMean *float64 `json:"staleness_mean,omitempty"`
	StalenessMax  *int64   `json:"staleness_max,omitempty"`
	HistoryRelErr *float64 `json:"history_rel_err,omitempty"`
	HistoryBytes  int64    `json:"history_bytes,omitempty"`
	// Cache is the device feature cache (Config.CacheBytes; nil without
	// one): its policy, rows, share of the feature matrix and device
	// bytes, and the training batches' hits, misses, bytes moved
	// host-to-device and hit rate per epoch and over the epochs trained.
	Cache   *featcache.Report `json:"cache,omitempty"`
	History []EpochStat       `json:"history,omitempty"`
}

// Options are the optional parts of a run.
type Options struct {
	// Recorder receives every stage span and metric of the run; nil turns
	// recording off. Run does not close it.
	Recorder *profile.Recorder
	// OnEpoch, if set, is called after every epoch (with overlapped
	// evaluation, once the epoch's evaluation has finished).
	OnEpoch func(EpochStat)
	// OnStart, if set, is called once before Run records anything, with
	// what the engine planned so that the run's optimizations fit its
	// memory budget (one line per decision; see planBudget): the moment to
	// record run_start. It is not called when Run fails before.
	OnStart func(plan []string)
}

// Run trains a model on ds with the given split on dev. It stops early with
// ctx's error when ctx is canceled.
//
// When ds is mapped from a cache file that is truncated during the run,
// the reads that fault end the run with an error naming the file (see
// data.Guard), on every goroutine of the run that reads the dataset.
func Run(ctx context.Context, cfg Config, ds *data.Dataset, split *data.Split, dev device.Device, opt Options) (res *Result, err error) {
	err = data.Guard(ds, func() error {
		t, err := newTrainer(cfg, ds, split, dev, opt.Recorder)
		if err != nil {
			return err
		}
		t.onStart = opt.OnStart
		t.deviceClock()
		defer t.close()
		res, err = t.run(ctx, opt.OnEpoch)
		return err
	})
	return res, err
}

// trainer is one run: the data, the model and its optimizer, and the
// parts that train and evaluate it.
type trainer struct {
	cfg     Config
	ds      *data.Dataset
	split   *data.Split
	dev     device.Device
	x       []float32 // features as the model sees them (normalized or not)
	deg     []float32 // degree + 1 per node, for GCN normalization
	model   *nn.Model
	opt     *nn.Optimizer
	sampler *sample.Neighbor // neighbor sampling, or nil
	gpu     *gpuData         // where a GPU keeps the features and samples
	rec     *profile.Recorder

	step   stepper     // the training step every schedule shares
	load   batchLoader // sampled batches to device inputs
	sched  schedule    // the epochs' batches, built by setup
	inf    *inference  // layer-wise inference for evaluation
	mem    memState    // per-batch memory accounting
	guard  *memGuard   // the memory guard, or nil
	policy *oomPolicy  // what a refused allocation and the guard do

	isVal []bool    // per node: in the validation set
	sel   *selector // the reported epoch and early stopping

	onStart func(plan []string) // Options.OnStart
	gas     *sample.GAS         // the GAS loader, when fitGASParts built it
	cache   *featcache.Report   // the feature cache (setupCache), or nil

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
	if err := checkModelSize(modelSpec(cfg, ds), int64(cfg.MemBudget), data.AvailableMemory); err != nil {
		return nil, err
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
	if len(t.x) > 0 && &t.x[0] != &ds.X[0] {
		// The model reads the normalized copy from here on: the mapped
		// originals need not stay resident beside it. A refused advice
		// changes nothing but the resident size, so its error is dropped.
		_, _ = data.DropFeaturePages(ds)
	}
	g := ds.Graph
	t.deg = make([]float32, g.N)
	for v := 0; v < g.N; v++ {
		t.deg[v] = float32(g.Indptr[v+1]-g.Indptr[v]) + 1
	}
	var err error
	if t.model, t.opt, err = newModel(cfg, ds, dev); err != nil {
		return nil, err
	}
	if err := t.mem.init(cfg, dev, t.model, rec, t.policy.guarded()); err != nil {
		t.close()
		return nil, err
	}
	if t.gpu, t.x, err = openGPUData(cfg, dev, t.x, ds.NumFeatures); err != nil {
		t.close()
		return nil, err
	}
	if err := t.gpu.holdResident(&t.mem, cfg, nil); err != nil {
		t.close()
		return nil, err
	}
	t.inf = newInference(cfg, ds, t.x, t.deg, t.isVal, &t.mem, rec)
	t.inf.available = deviceAvailable(dev)
	if cfg.Sampler == SamplerNeighbor {
		if t.sampler, err = sample.NewNeighbor(g, cfg.Fanouts, cfg.Seed); err != nil {
			t.close()
			return nil, err
		}
		if err := t.gpu.attachSampler(cfg, dev, t.sampler, &t.mem, t.inf); err != nil {
			t.close()
			return nil, err
		}
	}
	if t.policy.guarded() {
		t.guard = &memGuard{cfg: cfg, dev: dev, rec: rec, mem: &t.mem, policy: t.policy, sampler: t.sampler, deg: t.deg, train: split.Train}
	}
	t.step = stepper{model: t.model, opt: t.opt, rec: rec, seed: cfg.Seed}
	t.load = batchLoader{dev: dev, model: t.model, rec: rec, x: t.x, f: ds.NumFeatures, deg: t.deg, y: ds.Y, guard: t.guard, gpu: t.gpu}
	return t, nil
}

// modelSpec returns the spec of the model cfg trains on ds.
func modelSpec(cfg Config, ds *data.Dataset) nn.Spec {
	return nn.Spec{
		Kind: cfg.Model, In: ds.NumFeatures, Hidden: cfg.Hidden, Out: ds.NumClasses, Layers: cfg.Layers,
		Dropout: float32(cfg.Dropout), InputDropout: cfg.Model == nn.KindGCN || cfg.Model == nn.KindGAT, Seed: cfg.Seed,
		Heads: cfg.Heads, AttnDropout: float32(cfg.AttnDropout),
		Alpha: float32(cfg.Alpha), Theta: float32(cfg.Theta), Activation: cfg.Activation,
	}
}

// newModel allocates the configured model on dev and its optimizer.
func newModel(cfg Config, ds *data.Dataset, dev device.Device) (*nn.Model, *nn.Optimizer, error) {
	m, err := nn.New(dev, modelSpec(cfg, ds))
	if err != nil {
		return nil, nil, err
	}
	opt := nn.NewAdam(float32(cfg.LR), float32(cfg.WeightDecay))
	if cfg.WDConv != nil {
		opt.ConvWeightDecay = float32(*cfg.WDConv)
	}
	if cfg.WDOut != nil {
		wd := float32(*cfg.WDOut)
		opt.OutWeightDecay = &wd
	}
	opt.ClipNorm = float32(cfg.ClipNorm)
	return m, opt, nil
}

// close releases the schedule's device buffers, the model and the feature
// cache.
func (t *trainer) close() {
	if t.sched != nil {
		t.sched.close()
		t.sched = nil
	}
	if t.model != nil {
		t.model.Free(t.dev)
		t.model = nil
	}
	t.load.cache.Free(t.dev)
	t.load.cache = nil
	t.gpu.close(t.dev)
	t.gpu = nil
}

// deviceClock points an asynchronous device's spans at the recorder's
// clock.
func (t *trainer) deviceClock() {
	if a, ok := device.AsAsync(t.dev); ok && t.rec != nil {
		a.SetClock(t.rec.Now)
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
