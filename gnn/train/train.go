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
	TestAcc   float64 `json:"test_acc"`
	Batches   int     `json:"batches"`
	TrainS    float64 `json:"train_s"` // seconds spent training
	EvalS     float64 `json:"eval_s"`  // seconds spent evaluating
}

// Result summarizes a finished run.
type Result struct {
	TestAcc    float64     `json:"test_acc"` // at the epoch of best validation accuracy
	ValAcc     float64     `json:"val_acc"`  // the best validation accuracy
	BestEpoch  int         `json:"best_epoch"`
	Epochs     int         `json:"epochs"`
	EpochS     float64     `json:"epoch_s"` // mean wall seconds per epoch, evaluation included
	TrainS     float64     `json:"train_s"` // wall seconds of the whole training loop
	EvalS      float64     `json:"eval_s"`  // of which evaluating
	PeakBytes  int64       `json:"peak_bytes"`
	ParamBytes int64       `json:"param_bytes"`
	Steps      int         `json:"steps"` // optimizer steps
	History    []EpochStat `json:"history,omitempty"`
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
	t, err := newTrainer(cfg, ds, split, dev)
	if err != nil {
		return nil, err
	}
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

	fullX   *tensor.Tensor // full-batch: all features on the device
	fullBlk []*graph.Block // full-batch: one prepared block per layer
}

func newTrainer(cfg Config, ds *data.Dataset, split *data.Split, dev device.Device) (*trainer, error) {
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
	t := &trainer{cfg: cfg, ds: ds, split: split, dev: dev}
	t.x = prepareFeatures(ds.X, ds.NumFeatures, cfg.Features)
	g := ds.Graph
	t.deg = make([]float32, g.N)
	for v := 0; v < g.N; v++ {
		t.deg[v] = float32(g.Indptr[v+1]-g.Indptr[v]) + 1
	}
	var err error
	t.model, err = nn.New(dev, nn.Spec{
		Kind: cfg.Model, In: ds.NumFeatures, Hidden: cfg.Hidden, Out: ds.NumClasses, Layers: cfg.Layers,
		Dropout: float32(cfg.Dropout), InputDropout: cfg.Model == "gcn", Seed: cfg.Seed,
	})
	if err != nil {
		return nil, err
	}
	t.opt = nn.NewAdam(float32(cfg.LR), float32(cfg.WeightDecay))
	if cfg.Sampler == "neighbor" {
		if t.sampler, err = sample.NewNeighbor(g, cfg.Fanouts, cfg.Seed); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

func (t *trainer) close() {
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
	start := time.Now()
	for epoch := 1; epoch <= t.cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := EpochStat{Epoch: epoch}
		t0 := time.Now()
		var err error
		if t.cfg.Sampler == "full" {
			err = t.fullEpoch(&st)
		} else {
			err = t.neighborEpoch(ctx, epoch, &st)
		}
		if err != nil {
			return nil, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		st.TrainS = time.Since(t0).Seconds()
		if epoch%t.cfg.EvalEvery == 0 || epoch == t.cfg.Epochs {
			t1 := time.Now()
			preds, err := t.infer()
			if err != nil {
				return nil, fmt.Errorf("epoch %d evaluation: %w", epoch, err)
			}
			st.Evaluated = true
			st.ValAcc = accuracy(preds, t.ds.Y, t.split.Valid)
			st.TestAcc = accuracy(preds, t.ds.Y, t.split.Test)
			st.EvalS = time.Since(t1).Seconds()
			res.EvalS += st.EvalS
			if st.ValAcc > res.ValAcc {
				res.ValAcc, res.TestAcc, res.BestEpoch = st.ValAcc, st.TestAcc, epoch
			}
		}
		res.History = append(res.History, st)
		if onEpoch != nil {
			onEpoch(st)
		}
	}
	res.TrainS = time.Since(start).Seconds()
	res.EpochS = res.TrainS / float64(t.cfg.Epochs)
	res.PeakBytes = t.dev.Mem().Stats().Peak
	res.Steps = t.opt.Steps()
	return res, nil
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

func (t *trainer) ctx() *nn.Context {
	return &nn.Context{Dev: t.dev, Train: true, Seed: t.cfg.Seed, Step: uint64(t.opt.Steps())}
}

// step runs forward, loss on rows (indices into the logits) and backward,
// then one optimizer update.
func (t *trainer) step(blocks []*graph.Block, x *tensor.Tensor, rows []int32, labels []int32) (loss float64, correct int, err error) {
	c := t.ctx()
	logits, err := t.model.Forward(c, blocks, x)
	if err != nil {
		return 0, 0, err
	}
	defer t.dev.Free(logits)
	grad, err := t.dev.Alloc(logits.Rows, logits.Cols)
	if err != nil {
		t.model.Release(c)
		return 0, 0, err
	}
	defer t.dev.Free(grad)
	if rows == nil { // every logit row is a target
		loss, correct = t.dev.SoftmaxCrossEntropy(logits, labels, grad)
	} else {
		sel, err := t.dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			t.model.Release(c)
			return 0, 0, err
		}
		defer t.dev.Free(sel)
		gsel, err := t.dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			t.model.Release(c)
			return 0, 0, err
		}
		defer t.dev.Free(gsel)
		t.dev.Gather(sel, logits, rows)
		loss, correct = t.dev.SoftmaxCrossEntropy(sel, labels, gsel)
		t.dev.ScatterAdd(grad, gsel, rows)
	}
	if err := t.model.Backward(c, grad); err != nil {
		return 0, 0, err
	}
	t.opt.Step(t.dev, t.model.Params())
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
		g := t.ds.Graph
		x, err := t.dev.Alloc(g.N, t.ds.NumFeatures)
		if err != nil {
			return err
		}
		t.dev.CopyFromHost(x, t.x)
		t.fullX = x
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
	loss, correct, err := t.step(t.fullBlk, t.fullX, t.split.Train, t.labelsOf(t.split.Train))
	if err != nil {
		return err
	}
	st.Loss, st.TrainAcc, st.Batches = loss, float64(correct)/float64(len(t.split.Train)), 1
	return nil
}

// neighborEpoch trains on neighbor-sampled mini-batches of the training nodes.
func (t *trainer) neighborEpoch(ctx context.Context, epoch int, st *EpochStat) error {
	batches, err := sample.Batches(t.split.Train, t.cfg.BatchSize, t.cfg.Seed, epoch, true)
	if err != nil {
		return err
	}
	var lossSum float64
	correct, seen := 0, 0
	for i, targets := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := t.sampler.Sample(epoch, i, targets)
		if err != nil {
			return err
		}
		blocks := make([]*graph.Block, len(batch.Blocks))
		for l, blk := range batch.Blocks {
			blocks[l] = t.model.PrepareBlock(blk, batch.Nodes, t.deg)
		}
		x, err := t.dev.Alloc(len(batch.Nodes), t.ds.NumFeatures)
		if err != nil {
			return err
		}
		t.dev.GatherHost(x, t.x, batch.Nodes)
		targets := batch.Targets()
		loss, ok, err := t.step(blocks, x, nil, t.labelsOf(targets))
		t.dev.Free(x)
		if err != nil {
			return fmt.Errorf("batch %d: %w", batch.Index, err)
		}
		lossSum += loss * float64(len(targets))
		correct += ok
		seen += len(targets)
		st.Batches++
	}
	st.Loss = lossSum / float64(seen)
	st.TrainAcc = float64(correct) / float64(seen)
	return nil
}

// infer runs exact layer-wise inference over every node: layer by layer,
// each in chunks of destinations with all their neighbors, keeping the
// intermediate embeddings on the host. It returns each node's predicted
// class.
func (t *trainer) infer() ([]int32, error) {
	g := t.ds.Graph
	c := &nn.Context{Dev: t.dev}
	h, dim := t.x, t.ds.NumFeatures
	preds := make([]int32, g.N)
	scratch := sample.NewScratch(g.N)
	last := len(t.model.Layers) - 1
	for l, layer := range t.model.Layers {
		_, out := layer.Dims()
		var next []float32
		if l < last {
			next = make([]float32, g.N*out)
		}
		for lo := 0; lo < g.N; lo += t.cfg.EvalChunk {
			hi := min(lo+t.cfg.EvalChunk, g.N)
			dst := make([]int32, hi-lo)
			for i := range dst {
				dst[i] = int32(lo + i)
			}
			blk, src, err := sample.FullBlock(g, dst, scratch)
			if err != nil {
				return nil, err
			}
			blk = t.model.PrepareBlock(blk, src, t.deg)
			x, err := t.dev.Alloc(len(src), dim)
			if err != nil {
				return nil, err
			}
			t.dev.GatherHost(x, h, src)
			y, err := t.model.ForwardLayer(c, l, blk, x)
			t.dev.Free(x)
			if err != nil {
				return nil, fmt.Errorf("layer %d: %w", l+1, err)
			}
			if l < last {
				t.dev.CopyToHost(next[lo*out:hi*out], y)
			} else {
				t.dev.Argmax(preds[lo:hi], y)
			}
			t.dev.Free(y)
		}
		h, dim = next, out
	}
	return preds, nil
}
