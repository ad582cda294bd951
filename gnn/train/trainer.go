package train

import (
	"errors"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
)

// trainer is one run's lifecycle: it holds the data, the model and its
// optimizer and the parts that train and evaluate it, builds those parts
// once, each with the dependencies it reads (trainDeps, the schedules'
// own, cacheDeps, the budget planner, the evaluator) and never with the
// trainer itself, and runs them (run.go).
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

	eval *evaluator // evaluation, built by setup with the schedule

	// best is a host copy of the selected epoch's weights, one slice per
	// model parameter in Params order (kept only with evaluator.keepParams).
	best [][]float32
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

// trainDeps is what every schedule trains its batches through.
func (t *trainer) trainDeps() trainDeps {
	return trainDeps{dev: t.dev, rec: t.rec, step: &t.step, load: &t.load, mem: &t.mem, guard: t.guard, policy: t.policy}
}

// cacheDeps is what the feature cache's setup reads.
func (t *trainer) cacheDeps() cacheDeps {
	return cacheDeps{
		cfg: t.cfg, dev: t.dev, rec: t.rec, x: t.x, n: t.ds.NumNodes(), f: t.ds.NumFeatures, g: t.ds.Graph,
		gpu: t.gpu, mem: &t.mem, inf: t.inf, sampler: t.sampler, draw: newBatchDraw(t.cfg, t.split.Train),
	}
}

// newSchedule builds the configured schedule.
func (t *trainer) newSchedule() (schedule, error) {
	d := t.trainDeps()
	switch {
	case t.cfg.Sampler == SamplerFull:
		return t.fullBatch(), nil
	case t.cfg.Sampler == SamplerGAS:
		s, err := newGASSchedule(d, gasDeps{
			g: t.ds.Graph, y: t.ds.Y, f: t.ds.NumFeatures, deg: t.deg, train: t.split.Train,
			parts: t.cfg.Parts, partsPerBatch: t.cfg.PartsPerBatch, balance: t.cfg.PartBalance, layers: t.cfg.Layers, seed: t.cfg.Seed,
			model: t.model, opt: t.opt, inf: t.inf, loader: t.gas,
		})
		if err != nil {
			return nil, fmt.Errorf("gas setup: %w", err)
		}
		return s, nil
	case t.cfg.SamplerWorkers > 0:
		return &pipelined{d: d, start: pipelineStart{
			workers: t.cfg.SamplerWorkers, prefetch: t.cfg.Prefetch, epochs: t.cfg.Epochs, draw: newBatchDraw(t.cfg, t.split.Train),
			sampler: t.sampler, load: &t.load, ds: t.ds, dev: t.dev,
		}}, nil
	}
	return &sampled{d: d, draw: newBatchDraw(t.cfg, t.split.Train), sampler: t.sampler}, nil
}

// fullBatch is the full-batch schedule of the run's model.
func (t *trainer) fullBatch() *fullBatch {
	return &fullBatch{d: t.trainDeps(), g: t.ds.Graph, feat: t.x, f: t.ds.NumFeatures, deg: t.deg, model: t.model, train: t.split.Train}
}

// evaluator is the run's evaluation, once the schedule is built. The run
// evaluates its selected weights on the uncut graph at the end (see
// Result.TestAccUncut) with an inference cut and no memory budget.
func (t *trainer) evaluator() *evaluator {
	e := &evaluator{
		inf: t.inf, policy: t.policy, rec: t.rec, y: t.ds.Y, isVal: t.isVal, split: t.split,
		model: t.model, keepParams: t.cfg.EvalCut > 0 && t.mem.budget == 0,
	}
	if k, ok := t.sched.(layerKeeper); ok {
		e.keeper = k
	}
	return e
}
