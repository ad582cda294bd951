package runner

import (
	"context"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
)

// ExecOptions are the optional parts of Execute.
type ExecOptions struct {
	// Recorder receives the run's spans and metrics (nil: none). Execute
	// neither starts (RunStart) nor closes it: OnStart is the moment to
	// start it.
	Recorder *profile.Recorder
	// OnStart, if set, is called once before anything is recorded, with
	// the engine's budget plan (see train.Options.OnStart); not called
	// when the run fails before (loading the data, setting up).
	OnStart func(plan []string)
	// OnEpoch is called after every epoch (see train.Options).
	OnEpoch func(train.EpochStat)
	// OnReady, if set, is called once the dataset is loaded and split,
	// before training starts (e.g. to print what is being trained).
	OnReady func(ds *data.Dataset, split *data.Split)
	// Load tunes dataset loading (cache folder, progress, warnings);
	// Experiment.NoCache also turns the cache off.
	Load load.Options
	// Device to train on; nil means the device the config names
	// (OpenDevice), opened and closed by Execute.
	Device device.Device
	// Size names the settings Execute sizes to the machine's memory once
	// the data is loaded (PlanMemory); its lines open the plan OnStart
	// gets, and OnConfig, if set, gets the config that trains.
	Size     Free
	OnConfig func(train.Config)
}

// OpenDevice opens the device cfg names (cfg.Device: cpu, cuda, cuda:N)
// with cfg's thread count and transfer mode, and returns a function that
// releases it. Training sets the memory budget. In a binary built without
// the cuda tag, a cuda device is an error wrapping backend.ErrNoCUDA.
func OpenDevice(cfg train.Config) (device.Device, func() error, error) {
	return backend.Open(cfg.Device, backend.Options{Threads: cfg.Threads, AsyncTransfer: cfg.AsyncTransfer, Gemm: cfg.Gemm})
}

// LoadData opens the experiment's dataset and makes its split.
func LoadData(exp Experiment, opt load.Options) (*data.Dataset, *data.Split, error) {
	if exp.NoCache {
		opt.NoCache = true
	}
	ds, err := load.Open(exp.Data, opt)
	if err != nil {
		return nil, nil, err
	}
	split, err := MakeSplit(ds, exp.Split, exp.SplitSeed())
	if err != nil {
		return nil, nil, fmt.Errorf("split %s: %w", ds.Name, err)
	}
	return ds, split, nil
}

// MakeSplit returns the dataset's own split (mode auto, when it has one)
// or draws one as s says, from seed.
func MakeSplit(ds *data.Dataset, s Split, seed uint64) (*data.Split, error) {
	switch s.Mode {
	case SplitAuto, "":
		if ds.Split != nil {
			return ds.Split, nil
		}
		return data.PerClassSplit(ds.Y, ds.NumClasses, s.PerClass, s.NumValid, s.NumTest, seed)
	case SplitPerClass:
		return data.PerClassSplit(ds.Y, ds.NumClasses, s.PerClass, s.NumValid, s.NumTest, seed)
	case SplitFrac:
		return data.FractionSplit(ds.Y, s.TrainFrac, s.ValidFrac, seed)
	}
	return nil, fmt.Errorf("split mode %q is not one of auto, per-class, frac", s.Mode)
}

// Execute runs one training run of the experiment with cfg (the
// experiment's base config with a variant applied): it opens the device
// (unless opt.Device is given), loads the dataset, makes the split and
// trains with train.Run, recording gpu events while it trains on a GPU. It
// stops early with ctx's error (wrapped) when ctx is canceled.
//
// Execute does not change process-wide settings: callers that honor
// cfg.Threads for the whole process set runtime.GOMAXPROCS themselves.
func Execute(ctx context.Context, exp Experiment, cfg train.Config, opt ExecOptions) (*train.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dev := opt.Device
	if dev == nil {
		d, closeDev, err := OpenDevice(cfg)
		if err != nil {
			return nil, err
		}
		defer closeDev()
		dev = d
	}
	ds, split, err := LoadData(exp, opt.Load)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opt.OnReady != nil {
		opt.OnReady(ds, split)
	}
	cfg, sized := PlanMemory(DescribeMachine(dev), Workload{Nodes: int64(ds.NumNodes()), Edges: ds.Graph.NumEdges(), Features: ds.NumFeatures, Classes: ds.NumClasses}, cfg, opt.Size)
	if opt.OnConfig != nil {
		opt.OnConfig(cfg)
	}
	var gpu *backend.GPUSampler
	defer func() {
		if gpu != nil {
			gpu.Stop()
		}
	}()
	onStart := func(plan []string) {
		if opt.OnStart != nil {
			opt.OnStart(append(sized, plan...))
		}
		gpu = backend.SampleGPU(dev, opt.Recorder, 0) // after run_start
	}
	return train.Run(ctx, cfg, ds, split, dev, train.Options{Recorder: opt.Recorder, OnEpoch: opt.OnEpoch, OnStart: onStart})
}
