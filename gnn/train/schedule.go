package train

import (
	"context"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// schedule is how an epoch's training batches are drawn and trained:
// full-batch, neighbor-sampled on the training goroutine, neighbor-sampled
// by a pipeline of workers, or GAS. The run picks one before its first
// epoch; every one trains through the shared step and asks the OOM policy
// what a failed batch does.
type schedule interface {
	// epoch trains epoch (from 1), filling st's loss, accuracy and batch
	// count.
	epoch(ctx context.Context, epoch int, st *EpochStat) error
	// close releases what the schedule holds: device buffers, workers.
	close()
}

// layerKeeper is a schedule that takes each hidden layer's exact
// embeddings from an evaluation of the trained model (GAS refreshes its
// histories with them).
type layerKeeper interface {
	keeper(epoch int) func(l int, h []float32) error
}

// resultFiller is a schedule with figures of its own for the result.
type resultFiller interface {
	fill(res *Result)
}

// trainDeps is what every schedule trains its batches through, the same
// for all: the device, the recorder, the shared step, the batch loader,
// the memory accounting, the memory guard (nil when off) and the OOM
// policy. The trainer builds it once (trainer.trainDeps).
type trainDeps struct {
	dev    device.Device
	rec    *profile.Recorder
	step   *stepper
	load   *batchLoader
	mem    *memState
	guard  *memGuard
	policy *oomPolicy
}

// batchDraw is how an epoch's training nodes are drawn into mini-batches:
// shuffled by seed and epoch, size targets a batch.
type batchDraw struct {
	train []int32 // the training nodes
	size  int
	seed  uint64
}

// newBatchDraw is the mini-batch draw of cfg over the training nodes.
func newBatchDraw(cfg Config, train []int32) batchDraw {
	return batchDraw{train: train, size: cfg.BatchSize, seed: cfg.Seed}
}

// batches returns epoch's batches of training nodes.
func (d batchDraw) batches(epoch int) ([][]int32, error) {
	return sample.Batches(d.train, d.size, d.seed, epoch, true)
}

// count is the number of batches of an epoch.
func (d batchDraw) count() int {
	return (len(d.train) + d.size - 1) / d.size
}

// fullBatch trains one step per epoch on the whole graph, its features
// moved to the device once.
type fullBatch struct {
	d      trainDeps
	g      *graph.CSR
	feat   []float32 // the features on the host, f wide
	f      int
	deg    []float32 // degree + 1 per node
	model  *nn.Model
	train  []int32        // the training nodes
	x      *tensor.Tensor // all features on the device
	blocks []*graph.Block // one prepared block per layer
}

func (s *fullBatch) epoch(_ context.Context, epoch int, st *EpochStat) error {
	t := &s.d
	if s.x == nil {
		if err := s.load(epoch); err != nil {
			return err
		}
	}
	scope := device.NewScope()
	loss, correct, err := t.step.step(device.Scoped(t.dev, scope), epoch, 0, s.blocks, s.x, s.train, t.load.labelsOf(s.train))
	if err != nil {
		t.policy.abort(err, epoch, 0)
		return err
	}
	t.mem.recordTrain(epoch, 0, s.x.Bytes(), scope.Peak(), 0, memory.Shape{})
	st.Loss, st.TrainAcc, st.Batches = loss, float64(correct)/float64(len(s.train)), 1
	return nil
}

// load moves the features to the device and prepares the whole graph's
// block, recording a transfer span.
func (s *fullBatch) load(epoch int) error {
	dev, rec := s.d.dev, s.d.rec
	t0 := rec.Now()
	g := s.g
	x, err := dev.Alloc(g.N, s.f)
	if err != nil {
		return err
	}
	dev.CopyFromHost(x, s.feat)
	s.x = x
	rec.Span(profile.StageTransfer, profile.LaneCompute, epoch, 0, t0, rec.Now()-t0)
	all := make([]int32, g.N)
	for i := range all {
		all[i] = int32(i)
	}
	blk := s.model.PrepareBlock(graph.FullBlock(g), all, s.deg)
	s.blocks = make([]*graph.Block, len(s.model.Layers))
	for l := range s.blocks {
		s.blocks[l] = blk
	}
	return nil
}

func (s *fullBatch) close() {
	if s.x != nil {
		s.d.dev.Free(s.x)
		s.x = nil
	}
}

// sampled is the baseline mini-batch schedule: each batch is sampled,
// gathered and trained strictly in turn on the training goroutine.
type sampled struct {
	d       trainDeps
	draw    batchDraw
	sampler *sample.Neighbor
	w       *sample.Worker // the training goroutine's sampler state
}

func (s *sampled) epoch(ctx context.Context, epoch int, st *EpochStat) error {
	t := &s.d
	batches, err := s.draw.batches(epoch)
	if err != nil {
		return err
	}
	if s.w == nil {
		s.w = s.sampler.NewWorker()
	}
	acc := epochAcc{st: st}
	for i, targets := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := t.load.prepare(s.w, epoch, i, targets, profile.LaneCompute)
		if err := acc.train(t, p); err != nil {
			return err
		}
	}
	acc.finish()
	return nil
}

func (s *sampled) close() {}

// epochAcc accumulates an epoch's loss and accuracy over its batches.
type epochAcc struct {
	st            *EpochStat
	lossSum       float64
	correct, seen int
}

// train runs one prepared batch (through the memory guard, which may
// replace it by other draws or parts) and frees it. When the guard acted,
// its guard event follows the batches trained in the batch's place, with
// the largest peak they measured.
func (a *epochAcc) train(t *trainDeps, p *prepared) error {
	epoch, index := p.epoch, p.index
	parts, act, err := t.guard.guard(p)
	if err != nil {
		return fmt.Errorf("batch %d: %w", index, err)
	}
	var actual int64
	for _, q := range parts {
		peak, err := a.trainOne(t, q)
		actual = max(actual, peak)
		if err != nil {
			if act != nil {
				t.policy.guardActed(epoch, index, act.predicted, actual, t.mem.budget, act.action)
			}
			return err
		}
	}
	if act != nil {
		t.policy.guardActed(epoch, index, act.predicted, actual, t.mem.budget, act.action)
	}
	return nil
}

// trainOne trains one prepared batch and frees it, returning the peak it
// measured (0 when it did not train); a failed batch goes to the OOM
// policy, which may skip it.
func (a *epochAcc) trainOne(t *trainDeps, p *prepared) (int64, error) {
	if t.mem.gate != nil {
		// Overlapped evaluation under the guard: the batch's predicted
		// bytes are granted before its features are gathered.
		release := acquire(t.mem.gate, t.rec, t.guard.trainGrant(p), profile.LaneCompute, p.epoch, p.index)
		defer release()
	}
	if p.lazy {
		q := t.load.load(p.raw, p.epoch, p.index, profile.LaneCompute, t.rec.Now())
		q.predicted = p.predicted
		p = q
	}
	if p.err != nil {
		p.free(t.dev)
		if err := t.policy.batchFailed(p.err, p.epoch, p.index); err != nil {
			return 0, fmt.Errorf("batch %d: %w", p.index, err)
		}
		return 0, nil
	}
	scope := device.NewScope()
	loss, ok, err := t.step.step(device.Scoped(t.dev, scope), p.epoch, p.index, p.blocks, p.x, nil, p.labels)
	in := p.inBytes()
	p.free(t.dev)
	if err != nil {
		if err := t.policy.batchFailed(err, p.epoch, p.index); err != nil {
			return 0, fmt.Errorf("batch %d: %w", p.index, err)
		}
		return 0, nil
	}
	peak := t.mem.recordTrain(p.epoch, p.index, in, scope.Peak(), p.predicted, shapeOf(p.raw))
	a.add(loss, ok, len(p.labels))
	return peak, nil
}

// add counts a trained batch of n targets, ok of them predicted right,
// with mean loss.
func (a *epochAcc) add(loss float64, ok, n int) {
	a.lossSum += loss * float64(n)
	a.correct += ok
	a.seen += n
	a.st.Batches++
}

func (a *epochAcc) finish() {
	if a.seen > 0 {
		a.st.Loss = a.lossSum / float64(a.seen)
		a.st.TrainAcc = float64(a.correct) / float64(a.seen)
	}
}
