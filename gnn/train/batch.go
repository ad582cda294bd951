package train

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// batchLoader turns sampled batches into prepared ones: blocks prepared
// for the model, features gathered into a device buffer, labels. The
// memory guard's calibration uses one of its own (a scratch model,
// unrecorded, without the guard).
type batchLoader struct {
	dev   device.Device
	model *nn.Model         // for PrepareBlock (its kind's weights and self-loops)
	rec   *profile.Recorder // nil: nothing recorded
	x     []float32         // features as the model sees them
	f     int               // feature width
	deg   []float32         // degree + 1 per node
	y     []int32           // labels
	guard *memGuard         // nil: no guard
	cache *featcache.Cache  // the device feature cache (nil: none)
	tally *featcache.Tally  // the cache's outcome per epoch (nil: not counted)
	gpu   *gpuData          // where a GPU keeps the features and samples (nil: host)
}

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
	// ahead is the prefetch room the batch's input was gathered in by a
	// sampler worker, and pooled its bytes there (nil, 0: gathered by
	// the trainer, or not at all); free gives them back.
	ahead  *memory.Gate
	pooled int64
	err    error
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
	if p.ahead != nil {
		p.ahead.Release(p.pooled)
		p.ahead, p.pooled = nil, 0
	}
}

// prepare samples batch (epoch, index) with w and gathers its features,
// recording a sample and a transfer span on lane. It depends only on the
// seed, epoch, index and targets, so any worker produces the same batch.
// A batch the memory guard will replace (see deferLoad) is returned
// sampled but not loaded (lazy), so that nothing is gathered in vain.
func (l *batchLoader) prepare(w *sample.Worker, epoch, index int, targets []int32, lane string) *prepared {
	t0 := l.rec.Now()
	batch, err := w.Sample(epoch, index, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	if l.guard.deferLoad(batch) {
		l.sampleSpan(lane, epoch, index, t0, l.rec.Now()-t0, batch)
		return &prepared{epoch: epoch, index: index, raw: batch, lazy: true}
	}
	return l.load(batch, epoch, index, lane, t0)
}

// prepareAhead is prepare for a sampler worker preparing batches ahead of
// the trainer. With the memory guard on, the batch's features are gathered
// ahead only into the prefetch room the budget plan set aside
// (memState.ahead; see planBudget), when its input fits what is free
// there; otherwise the batch is only sampled (lazy) and the trainer
// gathers it once the guard has passed it. Either way the bytes batches
// waiting in the pipeline hold are bounded by the room, which the guard
// counts as taken, so the room the guard sees when it decides is the room
// the batch gets.
func (l *batchLoader) prepareAhead(w *sample.Worker, epoch, index int, targets []int32, lane string) *prepared {
	if !l.guard.on() {
		return l.prepare(w, epoch, index, targets, lane)
	}
	t0 := l.rec.Now()
	batch, err := w.Sample(epoch, index, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	if ahead := l.guard.mem.ahead; ahead != nil && !l.guard.tooLarge(batch) {
		if in := inputBytes(batch, l.f); ahead.TryAcquire(in) {
			p := l.load(batch, epoch, index, lane, t0)
			p.ahead, p.pooled = ahead, in
			return p
		}
	}
	l.sampleSpan(lane, epoch, index, t0, l.rec.Now()-t0, batch)
	return &prepared{epoch: epoch, index: index, raw: batch, lazy: true}
}

// inputBytes is the device bytes of a sampled batch's gathered features
// (f wide), as load allocates them.
func inputBytes(b *sample.Batch, f int) int64 {
	return 4 * int64(len(b.Nodes)) * int64(f)
}

// prepareAttempt is prepare with the sampler's draw attempt (see
// sample.Worker.SampleAttempt); attempt 0 is prepare's draw.
func (l *batchLoader) prepareAttempt(w *sample.Worker, epoch, index, attempt int, targets []int32, lane string) *prepared {
	t0 := l.rec.Now()
	batch, err := w.SampleAttempt(epoch, index, attempt, targets)
	if err != nil {
		return &prepared{epoch: epoch, index: index, err: err}
	}
	return l.load(batch, epoch, index, lane, t0)
}

// load prepares a sampled batch's blocks for the model, with their
// transposes for the backward pass (buildTransposes), and gathers its
// features, recording the sample span (from t0) and the transfer span.
func (l *batchLoader) load(batch *sample.Batch, epoch, index int, lane string, t0 int64) *prepared {
	rec := l.rec
	p := &prepared{epoch: epoch, index: index, raw: batch}
	p.blocks = make([]*graph.Block, len(batch.Blocks))
	for i, blk := range batch.Blocks {
		p.blocks[i] = l.model.PrepareBlock(blk, batch.Nodes, l.deg)
	}
	buildTransposes(l.model, p.blocks)
	t1 := rec.Now()
	l.sampleSpan(lane, epoch, index, t0, t1-t0, batch)
	p.x, p.err = l.dev.Alloc(len(batch.Nodes), l.f)
	if p.err == nil {
		l.gather(p.x, batch.Nodes, epoch, index, lane)
		p.labels = l.labelsOf(batch.Targets())
	}
	rec.Span(profile.StageTransfer, lane, epoch, index, t1, rec.Now()-t1)
	return p
}

// buildTransposes builds and caches the transposes of a training batch's
// prepared blocks, which the backward pass's SpMMT gathers over, so that
// the one who finishes the batch (a sampler worker, ahead of the trainer)
// pays for them rather than the training step. Only the blocks whose
// transposes backward reads are built (nn.Model.BackwardReadsTranspose:
// none for GAT, not the first block when the first layer aggregates
// first). Inference and evaluation blocks never run backward and do not
// come through here.
func buildTransposes(m *nn.Model, blocks []*graph.Block) {
	for l, b := range blocks {
		if m.BackwardReadsTranspose(l) {
			b.Transpose()
		}
	}
}

// labelsOf returns the labels of nodes.
func (l *batchLoader) labelsOf(nodes []int32) []int32 {
	out := make([]int32, len(nodes))
	for i, v := range nodes {
		out[i] = l.y[v]
	}
	return out
}

// gather sets dst's rows to the features of nodes (GatherHost),
// recording when the copy ran on an asynchronous device; with the feature
// cache, through it (gatherCached); with the features in device memory,
// from there (gpuData.gatherDevice).
func (l *batchLoader) gather(dst *tensor.Tensor, nodes []int32, epoch, batch int, lane string) {
	if l.gpu.gatherDevice(l.dev, dst, nodes) {
		return
	}
	if l.cache != nil {
		l.gatherCached(dst, nodes, epoch, batch, lane)
		return
	}
	if a, ok := device.AsAsync(l.dev); ok && l.rec != nil {
		rec := l.rec
		a.GatherHostTimed(dst, l.x, nodes, func(start, dur int64) {
			rec.Span(profile.StageGPUTransfer, profile.LaneGPUCopy, epoch, batch, start, dur)
		})
		return
	}
	l.dev.GatherHost(dst, l.x, nodes)
}

// gatherCached is gather through the feature cache: the batch's hits are
// copied from the cache's resident rows (a cache span: the lookup and
// those copies), its misses gathered from host memory, the only bytes
// that cross to the device; a cache event records the counts. The rows
// are exactly GatherHost's, so training is unchanged.
func (l *batchLoader) gatherCached(dst *tensor.Tensor, nodes []int32, epoch, batch int, lane string) {
	rec := l.rec
	t0 := rec.Now()
	s := l.cache.Split(nodes, featcache.Split{}.Sized(len(nodes)))
	if len(s.HitPos) > 0 {
		l.dev.GatherRows(dst, s.HitPos, l.cache.Data, s.HitSlot)
	}
	rec.Span(profile.StageCache, lane, epoch, batch, t0, rec.Now()-t0)
	if len(s.MissPos) > 0 {
		l.dev.GatherHostRows(dst, s.MissPos, l.x, s.MissNode)
	}
	hits, misses := int64(len(s.HitPos)), int64(len(s.MissPos))
	moved := 4 * misses * int64(l.f)
	rec.Cache(epoch, batch, hits, misses, moved)
	l.tally.Add(epoch, hits, misses, moved)
}
