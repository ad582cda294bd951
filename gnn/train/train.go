package train

import (
	"context"
	"math"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/nn"
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

// prepareFeatures applies the feature normalization mode.
func prepareFeatures(x []float32, f int, mode FeatureNorm) []float32 {
	if mode == FeaturesAuto {
		mode = FeaturesRow
		for _, v := range x {
			if v < 0 {
				mode = FeaturesNone
				break
			}
		}
	}
	if mode != FeaturesRow {
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
