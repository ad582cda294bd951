package train

import (
	"context"
	"fmt"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// prepared is a batch ready to train: sampled, its blocks prepared for the
// model, its features and labels gathered into device buffers.
type prepared struct {
	epoch, index int
	raw          *sample.Batch // the sampled batch, before PrepareBlock
	blocks       []*graph.Block
	x            *tensor.Tensor
	labels       []int32
	predicted    int64 // the guard's prediction of the batch's own peak (0 = none)
	need         int64 // predicted with the guard's safety margin: its memory gate grant (0 = none)
	lazy         bool  // sampled by the guard; blocks and features not loaded yet
	err          error
}

// inBytes returns the bytes of the batch's device input.
func (p *prepared) inBytes() int64 {
	if p.x == nil {
		return 0
	}
	return p.x.Bytes()
}

func (p *prepared) free(dev device.Device) {
	if p.x != nil {
		dev.Free(p.x)
		p.x = nil
	}
}

// prepare samples batch (epoch, index) with w and gathers its features,
// recording a sample and a transfer span on lane. It depends only on the
// seed, epoch, index and targets, so any worker produces the same batch.
// A batch the memory guard will replace (see deferLoad) is returned
// sampled but not loaded (lazy), so that nothing is gathered in vain.
func (t *trainer) prepare(w *sample.Worker, epoch, index int, targets []int32, lane string) *prepared {
	t0 := t.rec.Now()
	batch, err := w.Sample(epoch, index, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	if t.deferLoad(batch) {
		t.rec.Span(profile.StageSample, lane, epoch, index, t0, t.rec.Now()-t0)
		return &prepared{epoch: epoch, index: index, raw: batch, lazy: true}
	}
	return t.load(batch, epoch, index, lane, t0)
}

// prepareAhead is prepare for a sampler worker preparing batches ahead of
// the trainer: with the memory guard on, the batch is only sampled (lazy)
// and the trainer gathers it once the guard has passed it, so that batches
// waiting in the pipeline hold no device memory and the room the guard
// sees when it decides is the room the batch gets.
func (t *trainer) prepareAhead(w *sample.Worker, epoch, index int, targets []int32, lane string) *prepared {
	if !t.policy.guarded() {
		return t.prepare(w, epoch, index, targets, lane)
	}
	t0 := t.rec.Now()
	batch, err := w.Sample(epoch, index, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	t.rec.Span(profile.StageSample, lane, epoch, index, t0, t.rec.Now()-t0)
	return &prepared{epoch: epoch, index: index, raw: batch, lazy: true}
}

// prepareAttempt is prepare with the sampler's draw attempt (see
// sample.Worker.SampleAttempt); attempt 0 is prepare's draw.
func (t *trainer) prepareAttempt(w *sample.Worker, epoch, index, attempt int, targets []int32, lane string) *prepared {
	t0 := t.rec.Now()
	batch, err := w.SampleAttempt(epoch, index, attempt, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	return t.load(batch, epoch, index, lane, t0)
}

// load prepares a sampled batch's blocks for the model and gathers its
// features, recording the sample span (from t0) and the transfer span.
func (t *trainer) load(batch *sample.Batch, epoch, index int, lane string, t0 int64) *prepared {
	rec := t.rec
	p := &prepared{epoch: epoch, index: index, raw: batch}
	p.blocks = make([]*graph.Block, len(batch.Blocks))
	for l, blk := range batch.Blocks {
		p.blocks[l] = t.model.PrepareBlock(blk, batch.Nodes, t.deg)
	}
	t1 := rec.Now()
	rec.Span(profile.StageSample, lane, epoch, index, t0, t1-t0)
	p.x, p.err = t.dev.Alloc(len(batch.Nodes), t.ds.NumFeatures)
	if p.err == nil {
		t.gatherFeatures(p.x, batch.Nodes, epoch, index)
		p.labels = t.labelsOf(batch.Targets())
	}
	rec.Span(profile.StageTransfer, lane, epoch, index, t1, rec.Now()-t1)
	return p
}

// pipeline prepares the batches of every epoch, in order, on sampler
// workers ahead of the trainer. At most depth batches are prepared or being
// prepared beyond those the trainer has taken, which bounds memory; batch k
// travels in slot k%depth, which is free by then because batch k-depth has
// been taken.
type pipeline struct {
	depth  int
	slots  []chan *prepared
	tokens chan struct{}
	next   int // sequence number of the next batch the trainer takes
	cancel context.CancelFunc
	wg     sync.WaitGroup
	dev    device.Device
}

type job struct {
	seq, epoch, index int
	targets           []int32
}

// startPipeline starts the dispatcher and the sampler workers for all epochs.
func (t *trainer) startPipeline(ctx context.Context) *pipeline {
	workers := t.cfg.SamplerWorkers
	depth := t.cfg.Prefetch
	if depth <= 0 {
		depth = 2 * workers
	}
	depth = max(depth, workers)
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{depth: depth, slots: make([]chan *prepared, depth), tokens: make(chan struct{}, depth), cancel: cancel, dev: t.dev}
	for i := range p.slots {
		p.slots[i] = make(chan *prepared, 1)
	}
	jobs := make(chan job)
	p.wg.Add(1)
	go func() { // dispatcher
		defer p.wg.Done()
		defer close(jobs)
		seq := 0
		for epoch := 1; epoch <= t.cfg.Epochs; epoch++ {
			batches, err := sample.Batches(t.split.Train, t.cfg.BatchSize, t.cfg.Seed, epoch, true)
			if err != nil {
				// Batches fails only on arguments validated up front; report
				// it through the next slot all the same.
				select {
				case p.tokens <- struct{}{}:
					p.slots[seq%depth] <- &prepared{epoch: epoch, err: err}
				case <-ctx.Done():
				}
				return
			}
			for i, targets := range batches {
				select {
				case p.tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				select {
				case jobs <- job{seq, epoch, i, targets}:
				case <-ctx.Done():
					return
				}
				seq++
			}
		}
	}()
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go func(w int) {
			defer p.wg.Done()
			sw := t.sampler.NewWorker()
			lane := profile.SamplerLane(w)
			for j := range jobs {
				pb := t.prepareAhead(sw, j.epoch, j.index, j.targets, lane)
				p.slots[j.seq%depth] <- pb // never blocks: see pipeline
			}
		}(w)
	}
	return p
}

// take returns the next prepared batch, recording the time the trainer
// waited for it as a wait span on the compute lane.
func (p *pipeline) take(ctx context.Context, rec *profile.Recorder, epoch, index int) (*prepared, error) {
	t0 := rec.Now()
	select {
	case pb := <-p.slots[p.next%p.depth]:
		rec.Span(profile.StageWait, profile.LaneCompute, epoch, index, t0, rec.Now()-t0)
		p.next++
		<-p.tokens
		return pb, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop cancels the pipeline, waits for its goroutines and frees the batches
// prepared but never trained.
func (p *pipeline) stop() {
	p.cancel()
	// Workers may be blocked on nothing but a slot send, which never
	// blocks; the dispatcher returns on cancel. Drain concurrently so a
	// worker finishing a batch can always deliver it.
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	<-done
	for _, s := range p.slots {
		select {
		case pb := <-s:
			pb.free(p.dev)
		default:
		}
	}
}

// pipelinedEpoch trains the epoch's batches as the pipeline delivers them.
func (t *trainer) pipelinedEpoch(ctx context.Context, pipe *pipeline, epoch int, st *EpochStat) error {
	n := (len(t.split.Train) + t.cfg.BatchSize - 1) / t.cfg.BatchSize
	acc := epochAcc{st: st}
	for i := 0; i < n; i++ {
		pb, err := pipe.take(ctx, t.rec, epoch, i)
		if err != nil {
			return err
		}
		if pb.epoch != epoch || pb.index != i {
			pb.free(t.dev)
			if pb.err != nil {
				return pb.err
			}
			return errPipelineOrder(epoch, i, pb)
		}
		if err := acc.train(t, pb); err != nil {
			return err
		}
	}
	acc.finish()
	return nil
}

func errPipelineOrder(epoch, index int, pb *prepared) error {
	return &orderError{epoch, index, pb.epoch, pb.index}
}

// orderError reports a pipeline that delivered batches out of order (a bug).
type orderError struct{ wantEpoch, wantIndex, gotEpoch, gotIndex int }

func (e *orderError) Error() string {
	return fmt.Sprintf("pipeline delivered batch %d/%d, expected %d/%d (epoch/index)", e.gotEpoch, e.gotIndex, e.wantEpoch, e.wantIndex)
}
