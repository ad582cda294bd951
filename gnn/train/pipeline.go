package train

import (
	"context"
	"fmt"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
)

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

// pipelineStart is what a pipeline is started from: the workers and the
// prefetch depth asked for (Config.SamplerWorkers, Config.Prefetch), the
// epochs to prepare, how their batches are drawn, the sampler the workers
// draw from, the loader that prepares each batch, and the dataset (whose
// mapped reads are guarded on every worker) and the device.
type pipelineStart struct {
	workers, prefetch, epochs int
	draw                      batchDraw
	sampler                   *sample.Neighbor
	load                      *batchLoader
	ds                        *data.Dataset
	dev                       device.Device
}

// depth is the number of batches prepared ahead: Prefetch, by default two
// per worker, and never fewer than the workers.
func (ps pipelineStart) depth() int {
	depth := ps.prefetch
	if depth <= 0 {
		depth = 2 * ps.workers
	}
	return max(depth, ps.workers)
}

// startPipeline starts the dispatcher and the sampler workers for all epochs.
func startPipeline(ctx context.Context, ps pipelineStart) *pipeline {
	workers, depth := ps.workers, ps.depth()
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{depth: depth, slots: make([]chan *prepared, depth), tokens: make(chan struct{}, depth), cancel: cancel, dev: ps.dev}
	for i := range p.slots {
		p.slots[i] = make(chan *prepared, 1)
	}
	jobs := make(chan job)
	p.wg.Add(1)
	go func() { // dispatcher
		defer p.wg.Done()
		defer close(jobs)
		seq := 0
		for epoch := 1; epoch <= ps.epochs; epoch++ {
			batches, err := ps.draw.batches(epoch)
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
			sw := ps.sampler.NewWorker()
			lane := profile.SamplerLane(w)
			for j := range jobs {
				var pb *prepared
				err := data.Guard(ps.ds, func() error { pb = ps.load.prepareAhead(sw, j.epoch, j.index, j.targets, lane); return nil })
				if err != nil {
					pb = &prepared{epoch: j.epoch, err: err}
				}
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

// pipelined is the mini-batch schedule with sampler workers: a pipeline,
// started with the first epoch, prepares the batches of every epoch ahead
// of the trainer, which trains them as they are delivered.
type pipelined struct {
	d     trainDeps
	start pipelineStart
	pipe  *pipeline
}

func (s *pipelined) epoch(ctx context.Context, epoch int, st *EpochStat) error {
	t := &s.d
	if s.pipe == nil {
		s.pipe = startPipeline(ctx, s.start)
	}
	n := s.start.draw.count()
	acc := epochAcc{st: st}
	for i := 0; i < n; i++ {
		pb, err := s.pipe.take(ctx, t.rec, epoch, i)
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

// close stops the pipeline and frees the batches it prepared for nothing.
func (s *pipelined) close() {
	if s.pipe != nil {
		s.pipe.stop()
		s.pipe = nil
	}
}

func errPipelineOrder(epoch, index int, pb *prepared) error {
	return &orderError{epoch, index, pb.epoch, pb.index}
}

// orderError reports a pipeline that delivered batches out of order (a bug).
type orderError struct{ wantEpoch, wantIndex, gotEpoch, gotIndex int }

func (e *orderError) Error() string {
	return fmt.Sprintf("pipeline delivered batch %d/%d, expected %d/%d (epoch/index)", e.gotEpoch, e.gotIndex, e.wantEpoch, e.wantIndex)
}
