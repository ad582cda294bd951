package train

import (
	"context"
	"fmt"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// inference is exact layer-wise inference over the whole graph: layer by
// layer, each in chunks of destinations with all their neighbors (as many
// as fit the budget or the memory available, cut to fit the budget, or by
// Config.EvalCut), the intermediate embeddings, and the transformed rows
// of a layer that transforms first (see infer_transform.go), kept on the
// host. The chunks (and the first layer's input aggregate, where
// the model allows) are built once and shared by every evaluation; an
// overlapped evaluation runs on another goroutine than the setup, hence
// the mutex.
type inference struct {
	g        *graph.CSR
	x        []float32 // the input features as the model sees them (N×f)
	f        int
	deg      []float32 // degree + 1 per node, for GCN normalization
	y        []int32   // labels
	isVal    []bool    // per node: in the validation set
	cfg      Config    // the chunk size and the cut's settings
	budget   int64     // the device budget (0 = unlimited)
	resident int64     // on the device outside the chunks (see evalResident), reserve included
	// reserve is the part of resident left to other consumers beside the
	// chunks (a training batch beside an overlapped evaluation, the
	// prefetch room; see planBudget): chunk sizing counts it, the
	// recorded evaluation peaks do not.
	reserve int64
	gate    *memory.Gate
	rec     *profile.Recorder

	mu         sync.Mutex
	cache      []evalChunk // inference blocks, kept between evaluations
	agg0       []float32   // first layer's input aggregate, kept between evaluations
	seen       []int64     // each chunk's largest measured peak (see grant)
	cutEdges   int64       // edges dropped from the chunks
	minKeep    int         // the resolved automatic Config.CutMinKeep, once minKeepSet
	minKeepSet bool
	available  func() int64 // the memory chunks are sized from without a budget (nil: data.AvailableMemory)
	opts       inferOptions // the zero value but in tests
}

// inferOptions turn off, for tests that compare the ways of computing a
// pass, what inference does to save work; a run leaves them all false.
type inferOptions struct {
	noAggCache  bool // always aggregate the input afresh
	noTransform bool // run every layer on each chunk's input rows
	noHostViews bool // copy rows to the device as on an accelerator (see infer_host.go)
	poisonMats  bool // fill reused host matrices with NaNs (see hostMats)
}

func newInference(cfg Config, ds *data.Dataset, x, deg []float32, isVal []bool, mem *memState, rec *profile.Recorder) *inference {
	return &inference{
		g: ds.Graph, x: x, f: ds.NumFeatures, deg: deg, y: ds.Y, isVal: isVal, cfg: cfg,
		budget: mem.budget, resident: mem.evalResident(cfg), gate: mem.gate, rec: rec,
	}
}

// inferRequest is one inference pass.
type inferRequest struct {
	dev   device.Device // the device (each chunk runs through a scoped view)
	model *nn.Model
	epoch int // the evaluated epoch, for the recorded events (0: none)
	// keep, if not nil, receives each hidden layer's output (N×width on
	// the host, original node order) once the layer is complete.
	keep func(l int, h []float32) error
	// ce, if not nil, receives the last layer's logits.
	ce *valCE
}

// layerPass is one layer of an inference pass: what each of its chunks
// reads and writes.
type layerPass struct {
	dev   device.Device
	model *nn.Model
	layer int
	in    []float32 // the layer's input rows on the host, dim wide
	dim   int
	agg   []float32 // the first layer's precomputed input aggregate, or nil
	// tr is the layer's node transform when it transforms first (and agg
	// is nil); t then holds every node's transformed row, tw wide.
	tr nn.NodeTransform
	t  []float32
	tw int
	// host, if not nil, is the device's host memory: the pass reads the
	// host matrices in place (see infer_host.go).
	host  device.HostMemory
	mats  *hostMats // where the pass's host matrices come from and go back to
	out   int       // the layer's output width
	next  []float32 // the layer's output rows (nil at the last layer)
	preds []int32   // the predicted classes (written at the last layer)
	ce    *valCE
	last  bool
}

// run runs one inference pass and returns each node's predicted class,
// recording a mem event (phase eval) per chunk.
func (in *inference) run(r inferRequest) (_ []int32, err error) {
	m := r.model
	chunks, err := in.chunks(m)
	if err != nil {
		return nil, err
	}
	returnFreeHeap(m, in.g.N)
	peaks := make([]int64, len(chunks))
	defer func() {
		if err == nil {
			in.recordMem(r, chunks, peaks)
		}
	}()
	if hostViews(r.dev, in.opts.noHostViews) != nil {
		in.mu.Lock()
		setGlobalBlocks(in.g, chunks)
		in.mu.Unlock()
	}
	agg, err := in.inputAggregate(r.dev, m, chunks)
	if err != nil {
		return nil, err
	}
	grant := func(i int, ch evalChunk) func() {
		return acquire(in.gate, in.rec, in.grant(m, i, ch), profile.LaneEval, r.epoch, i)
	}
	return in.pass(r, chunks, agg, peaks, grant)
}

// pass runs model m (r.model) layer by layer over chunks, which cover
// every destination once, into preds (each node's predicted class), which
// it returns: with agg, if not nil, as the first layer's input aggregate,
// each layer's input transformed once where the layer transforms first
// (see infer_transform.go), each chunk's work granted by grant (nil: no
// grants) and its peak raised into peaks. Each hidden layer's output goes
// to r.keep once complete, the last layer's logits to r.ce.
func (in *inference) pass(r inferRequest, chunks []evalChunk, agg []float32, peaks []int64, grant func(i int, ch evalChunk) func()) ([]int32, error) {
	m := r.model
	preds := make([]int32, in.g.N)
	host := hostViews(r.dev, in.opts.noHostViews)
	h, dim := in.x, in.f
	last := len(m.Layers) - 1
	mats := &hostMats{poison: in.opts.poisonMats}
	defer mats.release()
	for l, layer := range m.Layers {
		_, out := layer.Dims()
		p := &layerPass{dev: r.dev, model: m, layer: l, in: h, dim: dim, out: out, preds: preds, ce: r.ce, last: l == last, host: host, mats: mats}
		if l < last {
			p.next = mats.get(in.g.N * out)
		}
		if l == 0 {
			p.agg = agg
		}
		if !in.opts.noTransform {
			if err := p.transformAll(chunks, peaks, grant); err != nil {
				return nil, err
			}
		}
		for i, ch := range chunks {
			release := func() {}
			if grant != nil {
				release = grant(i, ch)
			}
			err := p.chunk(ch, &peaks[i])
			release()
			if err != nil {
				return nil, err
			}
		}
		p.done(l)
		h, dim = p.next, out
		if r.keep != nil && l < last {
			if err := r.keep(l, h); err != nil {
				return nil, err
			}
		}
	}
	return preds, nil
}

// recordMem records the chunks' measured peaks for later grants and one
// mem event per chunk.
func (in *inference) recordMem(r inferRequest, chunks []evalChunk, peaks []int64) {
	in.saw(peaks)
	for i, ch := range chunks {
		var pred int64
		if in.budget > 0 {
			pred = in.resident - in.reserve + evalPeak(r.model, ch.blk.NumSrc, ch.blk.NumDst)
		}
		in.rec.Mem(r.epoch, i, profile.PhaseEval, in.resident-in.reserve+peaks[i], r.dev.Mem().Stats().Live, in.budget, pred)
	}
}

// grant is the memory gate grant of inference chunk i of model m: its
// analytic peak, or its largest measured peak in earlier evaluations if
// that is larger.
func (in *inference) grant(m *nn.Model, i int, ch evalChunk) int64 {
	n := evalPeak(m, ch.blk.NumSrc, ch.blk.NumDst)
	in.mu.Lock()
	if i < len(in.seen) {
		n = max(n, in.seen[i])
	}
	in.mu.Unlock()
	return n
}

// saw records the chunks' measured peaks of an evaluation for later grants
// (see grant).
func (in *inference) saw(peaks []int64) {
	if in.gate == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.seen) != len(peaks) {
		in.seen = make([]int64, len(peaks))
	}
	for i, p := range peaks {
		in.seen[i] = max(in.seen[i], p)
	}
}

// maxCachedAggregateBytes bounds the host memory kept for the first
// layer's input aggregate.
const maxCachedAggregateBytes = 2 << 30

// inputAggregate returns the first layer's aggregation of the input
// features over every node's full neighborhood (N×F on the host), computed
// once and reused by every evaluation, or nil when the first layer cannot
// run from an aggregate (nn.Precomputable) or the aggregate would be too
// large to keep. The features never change, so evaluations from it are
// those computed from scratch: exactly for a layer that aggregates first,
// up to the rounding of the sums for one that transforms first, whose
// every evaluation then skips the aggregation.
func (in *inference) inputAggregate(dev device.Device, m *nn.Model, chunks []evalChunk) ([]float32, error) {
	p, ok := m.Layers[0].(nn.Precomputable)
	f := in.f
	if !ok || in.opts.noAggCache || int64(in.g.N)*int64(f)*4 > maxCachedAggregateBytes {
		return nil, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.agg0 != nil {
		return in.agg0, nil
	}
	agg := make([]float32, in.g.N*f)
	c := &nn.Context{Dev: dev}
	host := hostViews(dev, in.opts.noHostViews)
	if host != nil {
		setGlobalBlocks(in.g, chunks)
	}
	for _, ch := range chunks {
		release := acquire(in.gate, in.rec, 4*int64(f)*int64(len(ch.src)+ch.hi-ch.lo), profile.LaneEval, 0, ch.lo)
		var a *tensor.Tensor
		var err error
		if host != nil {
			// The sources in place (see infer_host.go).
			a, err = p.Aggregate(c, ch.gblk, host.HostView(in.x, in.g.N, f))
		} else {
			a, err = gatheredAggregate(dev, p, ch, in.x, f)
		}
		if err == nil {
			dev.CopyToHost(agg[ch.lo*f:ch.hi*f], a)
			dev.Free(a)
		}
		release()
		if err != nil {
			return nil, err
		}
	}
	in.agg0 = agg
	return agg, nil
}

// gatheredAggregate returns layer p's aggregate over chunk ch from the
// chunk's source rows of the input features feat (f wide), gathered to dev.
func gatheredAggregate(dev device.Device, p nn.Precomputable, ch evalChunk, feat []float32, f int) (*tensor.Tensor, error) {
	x, err := dev.Alloc(len(ch.src), f)
	if err != nil {
		return nil, err
	}
	dev.GatherHost(x, feat, ch.src)
	a, err := p.Aggregate(&nn.Context{Dev: dev}, ch.blk, x)
	dev.Free(x)
	return a, err
}

// chunk runs the layer on one chunk, raising *peak to the chunk's own
// peak: from the precomputed aggregate when the pass has one, from the
// transformed rows of the chunk's sources when the layer transforms first,
// else from the layer's input rows of the chunk's sources.
func (p *layerPass) chunk(ch evalChunk, peak *int64) error {
	scope := device.NewScope()
	dev := device.Scoped(p.dev, scope)
	var y *tensor.Tensor
	var err error
	switch {
	case p.agg != nil:
		y, err = p.fromAggregate(dev, ch)
	case p.t != nil:
		y, err = p.fromTransformed(dev, ch)
	case p.inPlace() && aggregatesFirst(p.model, p.layer):
		y, err = p.fromHostAggregate(dev, ch)
	default:
		y, err = p.forward(dev, ch)
	}
	if err != nil {
		return err
	}
	p.store(dev, y, ch)
	*peak = max(*peak, scope.Peak())
	return nil
}

// forward gathers the chunk's source rows of the layer's input and runs
// the layer on them.
func (p *layerPass) forward(dev device.Device, ch evalChunk) (*tensor.Tensor, error) {
	x, err := dev.Alloc(len(ch.src), p.dim)
	if err != nil {
		return nil, err
	}
	dev.GatherHost(x, p.in, ch.src)
	y, err := p.model.ForwardLayer(&nn.Context{Dev: dev}, p.layer, ch.blk, x)
	dev.Free(x)
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", p.layer+1, err)
	}
	return y, nil
}

// fromAggregate runs the first layer from the precomputed input aggregate:
// only the destinations' aggregate (and their own rows, when the layer
// reads them) move to the device, and no aggregation runs.
func (p *layerPass) fromAggregate(dev device.Device, ch evalChunk) (*tensor.Tensor, error) {
	a, err := p.rows(dev, p.agg, ch.lo, ch.hi, p.dim)
	if err != nil {
		return nil, err
	}
	defer dev.Free(a)
	var xd *tensor.Tensor
	if usesRoot(p.model.Layers[0]) {
		if xd, err = p.rows(dev, p.in, ch.lo, ch.hi, p.dim); err != nil {
			return nil, err
		}
		defer dev.Free(xd)
	}
	return p.fromAggregateRows(dev, ch, a, xd)
}

// fromAggregateRows runs the pass's layer from the aggregate a of chunk
// ch (and the destinations' own rows xd): into the chunk's rows of the
// layer's output matrix when the pass reads host matrices in place and
// the layer can (see layerPass.dest), else into a new tensor.
func (p *layerPass) fromAggregateRows(dev device.Device, ch evalChunk, a, xd *tensor.Tensor) (*tensor.Tensor, error) {
	c := &nn.Context{Dev: dev}
	if y := p.dest(ch); y != nil && p.model.FromAggregateInto(c, p.layer, a, xd, y) {
		return y, nil
	}
	y, err := p.model.FromAggregate(c, p.layer, a, xd)
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", p.layer+1, err)
	}
	return y, nil
}

// store keeps a chunk's layer output y and frees it: at the last layer its
// predicted classes go to preds (and its cross-entropy to ce, if not nil),
// else its rows to next.
func (p *layerPass) store(dev device.Device, y *tensor.Tensor, ch evalChunk) {
	if p.last {
		dev.Argmax(p.preds[ch.lo:ch.hi], y)
		p.ce.add(dev, y, ch.lo, ch.hi)
	} else if !y.View {
		// (A view is the chunk's rows of next already: see dest.)
		dev.CopyToHost(p.next[ch.lo*p.out:ch.hi*p.out], y)
	}
	dev.Free(y)
}

// uncut runs inference with model m on the whole graph, without any cut,
// in chunks of Config.EvalChunk destinations (automatic: sized by the
// memory available), ignoring the budget (see Result.TestAccUncut), and
// returns each node's predicted class.
func (in *inference) uncut(dev device.Device, m *nn.Model) ([]int32, error) {
	scratch := sample.NewScratch(in.g.N)
	var chunks []evalChunk
	size := uncutChunk(m, in.cfg, in.g.N, in.available)
	for lo := 0; lo < in.g.N; lo += size {
		hi := min(in.g.N, lo+size)
		blk, src, err := rangeBlock(in.g, lo, hi, scratch)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, evalChunk{lo: lo, hi: hi, blk: blk, src: src, whole: true})
	}
	in.prepareBlocks(m, chunks, false)
	if hostViews(dev, in.opts.noHostViews) != nil {
		setGlobalBlocks(in.g, chunks) // chunks of this pass alone
	}
	return in.pass(inferRequest{dev: dev, model: m}, chunks, nil, make([]int64, len(chunks)), nil)
}

// acquire takes n bytes of the memory gate g for the work of (epoch,
// batch) on lane, recording the time it waited as a mem.wait span, and
// returns the function that releases them. Without a gate it does nothing.
func acquire(g *memory.Gate, rec *profile.Recorder, n int64, lane string, epoch, batch int) func() {
	if g == nil {
		return func() {}
	}
	t0 := rec.Now()
	// Never canceled: every holder releases once its step or chunk ends,
	// so a wait lasts at most as long as the work granted before it.
	got, waited, _ := g.Acquire(context.Background(), n)
	if waited {
		rec.Span(profile.StageMemWait, lane, epoch, batch, t0, rec.Now()-t0)
	}
	return func() { g.Release(got) }
}

// cut returns the edges dropped from the inference chunks.
func (in *inference) cut() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.cutEdges
}
