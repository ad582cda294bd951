package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// Memory accounting.
//
// A training batch's peak is measured exactly, whatever else allocates on
// the device at the same time (sampler workers gathering later batches, an
// overlapped evaluation): the step runs through a device.Scoped view whose
// Scope counts only the step's own tensors. The batch's peak is then
//
//	resident + input + step peak
//
// where resident is the model's parameters, gradients and Adam moments and
// input is the batch's gathered features: the device's peak had the batch
// run alone. An inference chunk's peak is resident plus the largest scope
// peak of the chunk over the layers.
//
// The guard predicts "input + step peak" (the batch's own bytes) from the
// batch's shape and keeps predicted*(1+margin) under the room left on the
// device: budget - (live - the batch's input). In the baseline schedule
// that room is exactly budget - resident; with sampler workers the guard
// has workers only sample, so it is budget - resident too.
//
// Overlapped evaluation under the guard. The evaluation of epoch e runs
// while epoch e+1 trains, on the same device: the room a training batch
// sees when the guard decides says nothing of the inference chunk that
// allocates a moment later, and inference chunks are sized to the budget
// without regard to the training batch. The two consumers therefore share
// the budget through a memory gate (memory.Gate), a first-come-first-served
// semaphore over bytes:
//
//   - the gate's capacity is budget - resident - snapshot (the evaluated
//     copy of the weights, allocated between epochs while nothing else is
//     in flight, and counted as held for the whole run so that the
//     capacity, and with it every guard decision, is the same whatever
//     the timing: the same seed gives the same batches and weights);
//   - the guard keeps each training batch's predicted bytes, with the
//     safety margin, under that capacity, and the trainer acquires them
//     from the gate before it gathers the batch's features (every batch
//     is sampled lazily, so nothing is on the device before) and releases
//     them once the step has freed its tensors;
//   - the evaluator sizes its chunks to the same capacity and acquires each
//     chunk's analytic peak (evalPeak, exact for GCN and GraphSAGE; or the
//     chunk's measured peak in an earlier evaluation, if larger) before
//     the chunk allocates.
//
// Grants that fit together run together; when they do not, the later one
// waits (a mem.wait span on its lane) until the earlier one is done. A
// training batch thus waits for at most the one inference chunk granted
// before it, and is never split or cut because an evaluation happens to be
// in flight. Near a tight budget, where a training batch alone takes most
// of the room, training and inference take turns chunk by chunk; with room
// to spare they overlap fully. Each batch's and chunk's own peak is still
// measured by its Scope and recorded as above.

const (
	// calibBatches is the number of calibration measurements before the
	// predictor predicts (probes with a guard, real batches without).
	calibBatches = 8
	// predictorWindow is the number of recent batches the predictor fits.
	predictorWindow = 64
	// maxResample bounds the guard's re-draws before it splits instead: a
	// batch too large because of its targets (their degrees) stays too
	// large however its neighbors are drawn, so more re-draws mostly cost
	// sampling time.
	maxResample = 2
	// splitAttempt is the first sampler attempt used by the parts of a
	// split batch (re-draws use 1..maxResample).
	splitAttempt = 1 << 20
)

// memState is the trainer's memory accounting and guard state.
type memState struct {
	budget   int64 // 0 = unlimited
	resident int64 // parameters, gradients and optimizer moments
	pred     *memory.Predictor
	// gate shares the room beyond the resident bytes and the evaluated
	// snapshot between training batches and an overlapped evaluation's
	// chunks (guard and overlapped evaluation only; nil otherwise).
	gate *memory.Gate
	// evalSeen is each inference chunk's largest measured peak in earlier
	// evaluations (guarded by evalMu), which its gate grant covers too.
	evalSeen []int64

	mu        sync.Mutex
	peaks     []int64 // training batch peaks
	ooms      int
	guardActs int
	evalCut   int64
	guardW    *sample.Worker // the trainer's own sampler state for the guard
	// cutRate is the edges the guard's last cut dropped per byte it had
	// to shed (0 before the first cut): the next cut's first estimate.
	cutRate float64
	// minKeep is the resolved automatic Config.CutMinKeep, once
	// minKeepSet (see cutMinKeep).
	minKeep    int
	minKeepSet bool
}

// initMem sets the budget on the device, refusing one that the model alone
// exceeds.
func (t *trainer) initMem() error {
	t.mem.resident = t.model.ParamBytes()
	t.mem.pred = memory.NewPredictor(predictorWindow, calibBatches)
	b := int64(t.cfg.MemBudget)
	if b <= 0 {
		return nil
	}
	if live := t.dev.Mem().Stats().Live; live > b {
		return fmt.Errorf("memory budget %s is smaller than the model's parameters, gradients and optimizer state (%s on the device)",
			units.FormatSize(b), units.FormatSize(live))
	}
	if t.cfg.MemGuard != "" && t.cfg.OverlapEval {
		if b <= t.evalResident() {
			return fmt.Errorf("memory budget %s leaves no room beside the model's parameters, gradients and optimizer state and the evaluated snapshot of its weights (%s)",
				units.FormatSize(b), units.FormatSize(t.evalResident()))
		}
		t.mem.gate = memory.NewGate(b - t.evalResident())
	}
	t.dev.Mem().SetBudget(b)
	t.mem.budget = b
	return nil
}

// acquire takes n bytes of the memory gate for the work of (epoch, batch)
// on lane, recording the time it waited as a mem.wait span, and returns
// the function that releases them. Without a gate it does nothing.
func (t *trainer) acquire(n int64, lane string, epoch, batch int) func() {
	g := t.mem.gate
	if g == nil {
		return func() {}
	}
	t0 := t.rec.Now()
	// Never canceled: every holder releases once its step or chunk ends,
	// so a wait lasts at most as long as the work granted before it.
	got, waited, _ := g.Acquire(context.Background(), n)
	if waited {
		t.rec.Span(profile.StageMemWait, lane, epoch, batch, t0, t.rec.Now()-t0)
	}
	return func() { g.Release(got) }
}

// trainGrant is the gate grant of a training batch: the guard's prediction
// of its own bytes with the safety margin, or the gate's whole capacity
// when the guard made none.
func (t *trainer) trainGrant(p *prepared) int64 {
	if p.need > 0 {
		return p.need
	}
	return t.mem.gate.Capacity()
}

// evalGrant is the gate grant of inference chunk i of model m: its
// analytic peak, or its largest measured peak in earlier evaluations if
// that is larger.
func (t *trainer) evalGrant(m *nn.Model, i int, ch evalChunk) int64 {
	n := evalPeak(m, ch.blk.NumSrc, ch.blk.NumDst)
	t.evalMu.Lock()
	if i < len(t.mem.evalSeen) {
		n = max(n, t.mem.evalSeen[i])
	}
	t.evalMu.Unlock()
	return n
}

// sawEval records the chunks' measured peaks of an evaluation for later
// grants (see evalGrant).
func (t *trainer) sawEval(peaks []int64) {
	if t.mem.gate == nil {
		return
	}
	t.evalMu.Lock()
	defer t.evalMu.Unlock()
	if len(t.mem.evalSeen) != len(peaks) {
		t.mem.evalSeen = make([]int64, len(peaks))
	}
	for i, p := range peaks {
		t.mem.evalSeen[i] = max(t.mem.evalSeen[i], p)
	}
}

func (t *trainer) oomAction() string {
	if t.cfg.OnOOM == OOMSkip {
		return profile.ActionSkip
	}
	return profile.ActionAbort
}

// recordOOM records an oom event for err if it is an out-of-memory error
// and returns action; otherwise it returns "".
func (t *trainer) recordOOM(err error, epoch, batch int, action string) string {
	var o *device.OOMError
	if !errors.As(err, &o) {
		return ""
	}
	t.mem.mu.Lock()
	t.mem.ooms++
	t.mem.mu.Unlock()
	t.rec.Emit(profile.Event{T: profile.TypeOOM, Epoch: epoch, Batch: batch, Requested: o.Requested, Live: o.Live, Budget: o.Budget, Action: action})
	return action
}

// shapeOf returns the predictor's view of a sampled batch (empty for nil).
func shapeOf(b *sample.Batch) memory.Shape {
	if b == nil || len(b.Blocks) == 0 {
		return memory.Shape{}
	}
	s := memory.Shape{Nodes: make([]int, 0, len(b.Blocks)+1), Edges: make([]int64, 0, len(b.Blocks))}
	s.Nodes = append(s.Nodes, b.Blocks[0].NumSrc)
	for _, blk := range b.Blocks {
		s.Nodes = append(s.Nodes, blk.NumDst)
		s.Edges = append(s.Edges, blk.NumEdges())
	}
	return s
}

// recordTrainMem records a trained batch's memory: in is its input bytes,
// stepPeak the step's own peak, predicted the guard's prediction of their
// sum (0 = none). The measurement also trains the predictor.
func (t *trainer) recordTrainMem(epoch, index int, in, stepPeak, predicted int64, shape memory.Shape) {
	own := in + stepPeak
	if len(shape.Nodes) > 0 {
		if p := t.mem.pred.Observe(shape, own); predicted == 0 {
			predicted = p
		}
	}
	peak := t.mem.resident + own
	t.mem.mu.Lock()
	t.mem.peaks = append(t.mem.peaks, peak)
	t.mem.mu.Unlock()
	if predicted > 0 {
		predicted += t.mem.resident
	}
	t.rec.Mem(epoch, index, profile.PhaseTrain, peak, t.dev.Mem().Stats().Live, t.mem.budget, predicted)
}

// memResult fills the result's memory figures.
func (t *trainer) memResult(res *Result) {
	t.mem.mu.Lock()
	defer t.mem.mu.Unlock()
	if n := len(t.mem.peaks); n > 0 {
		p := slices.Clone(t.mem.peaks)
		slices.Sort(p)
		res.MaxBatchPeakBytes = p[n-1]
		res.P99BatchPeakBytes = p[int(math.Ceil(0.99*float64(n)))-1]
	}
	res.OOMCount, res.GuardActions, res.EvalCutEdges = t.mem.ooms, t.mem.guardActs, t.mem.evalCut
	if t.mem.pred.Scored() > 0 {
		m := t.mem.pred.MAPE()
		res.PredictorMAPE = &m
	}
}

// calibrate fits the guard's predictor before training: it trains probe
// batches of growing size (up to half a batch, or what fits the budget;
// drawn with epoch 0, which training never uses) on a scratch copy of the
// model with a throwaway optimizer, measuring each probe's peak: the first
// calibBatches fit the predictor, the next memory.WarmScored are predicted
// before they are measured, so that the guard's safety margin starts from
// observed errors instead of the warm-up margin (the predictor's MAPE is
// then reset: it covers the training batches). The run's model, optimizer,
// sampler streams and recording are untouched, so training is the same as
// without calibration until the guard acts.
func (t *trainer) calibrate() error {
	if t.cfg.MemGuard == "" {
		return nil
	}
	scratch, err := nn.New(t.dev, t.model.Spec)
	if err != nil {
		return fmt.Errorf("memory guard calibration: %w", err)
	}
	model, opt, rec := t.model, t.opt, t.rec
	t.model, t.opt, t.rec = scratch, nn.NewAdam(float32(t.cfg.LR), 0), nil
	defer func() {
		scratch.Free(t.dev)
		t.model, t.opt, t.rec = model, opt, rec
	}()
	batches, err := sample.Batches(t.split.Train, t.cfg.BatchSize, t.cfg.Seed, 0, true)
	if err != nil {
		return err
	}
	targets := batches[0]
	w := t.guardWorker()
	// Probe sizes spread over (0, hi]; a probe that runs out of memory
	// lowers hi below it and the next probes spread over what fits.
	const probes = calibBatches + memory.WarmScored
	hi, obs := max(1, len(targets)/2), 0
	for k := 0; obs < probes && k < 4*probes; k++ {
		m := max(1, hi*(obs+1)/probes)
		p := t.prepareAttempt(w, 0, k, 0, targets[:m], profile.LaneCompute)
		err := p.err
		var in, peak int64
		if err == nil {
			scope := device.NewScope()
			_, _, err = t.step(device.Scoped(t.dev, scope), 0, k, p.blocks, p.x, nil, p.labels)
			in, peak = p.inBytes(), scope.Peak()
		}
		p.free(t.dev)
		if err != nil {
			if !device.IsOOM(err) {
				return fmt.Errorf("memory guard calibration: %w", err)
			}
			if m == 1 {
				break
			}
			hi = max(1, (m-1)*probes/(obs+1))
			continue
		}
		t.mem.pred.Observe(shapeOf(p.raw), in+peak)
		obs++
	}
	if !t.mem.pred.Ready() {
		return fmt.Errorf("memory guard calibration: even the smallest probe batches do not fit the memory budget %s", units.FormatSize(t.mem.budget))
	}
	t.mem.pred.ResetMAPE()
	return nil
}

func (t *trainer) guardWorker() *sample.Worker {
	if t.mem.guardW == nil {
		t.mem.guardW = t.sampler.NewWorker()
	}
	return t.mem.guardW
}

// room returns the bytes a batch whose input of in bytes is already on the
// device may use: the budget minus everything else live, or, with the
// memory gate, the gate's capacity (the batch waits for its share there).
func (t *trainer) room(in int64) int64 {
	if t.mem.gate != nil {
		return t.mem.gate.Capacity()
	}
	return t.mem.budget - (t.dev.Mem().Stats().Live - in)
}

// deferLoad reports whether a freshly sampled batch should reach the guard
// before its features are gathered: the guard is on and the batch is
// predicted not to fit the budget even with nothing but the model on the
// device. The guard then replaces it without having gathered (and freed)
// its input. With the memory gate every batch is deferred: its features
// are gathered only once the gate has granted its bytes.
func (t *trainer) deferLoad(b *sample.Batch) bool {
	if t.cfg.MemGuard == "" {
		return false
	}
	if t.mem.gate != nil {
		return true
	}
	lm, ok := t.mem.pred.Model()
	if !ok {
		return false
	}
	pred, ok := lm.Predict(shapeOf(b))
	return ok && !lm.Fits(pred, t.mem.budget-t.mem.resident)
}

// guard returns the batches to train in place of p: p itself when the
// guard is off or p is predicted to fit, otherwise p re-drawn, cut or split
// (not yet loaded: trainOne loads them one at a time), recording an oom
// event with the action and a guard span.
//
// Every decision is a prediction from a sampled batch's shape (nodes and
// edges per layer), made before its features are gathered: a batch that
// prepare deferred (see deferLoad) costs no gather, and the guard's actions
// draw and weigh candidates without loading them. The actions, cheapest
// first in time: cut drops just enough edges of the outermost block (a
// partial selection of the rule's order), split draws the fewest parts
// predicted to fit, resample re-draws the batch at most maxResample times.
// Whatever the mode, a batch the action cannot fit is split.
func (t *trainer) guard(p *prepared) ([]*prepared, error) {
	if t.cfg.MemGuard == "" || p.raw == nil || (p.err != nil && !device.IsOOM(p.err)) {
		return []*prepared{p}, nil
	}
	lm, ok := t.mem.pred.Model()
	if !ok {
		return []*prepared{p}, nil
	}
	pred, _ := lm.Predict(shapeOf(p.raw))
	if p.err == nil && lm.Fits(pred, t.room(p.inBytes())) {
		p.predicted, p.need = pred, lm.Need(pred)
		return []*prepared{p}, nil
	}
	rec := t.rec
	t0 := rec.Now()
	epoch, index := p.epoch, p.index
	raw := p.raw
	targets := raw.Targets()
	p.free(t.dev)
	room := t.room(0)
	w := t.guardWorker()
	var out []*prepared
	action := ""
	lazy := func(b *sample.Batch, pr int64) *prepared {
		return &prepared{epoch: epoch, index: index, raw: b, predicted: pr, need: lm.Need(pr), lazy: true}
	}
	switch t.cfg.MemGuard {
	case GuardResample:
		for a := 1; a <= maxResample && out == nil; a++ {
			b, err := w.SampleAttempt(epoch, index, a, targets)
			if err != nil {
				return nil, err
			}
			if bp, _ := lm.Predict(shapeOf(b)); lm.Fits(bp, room) {
				out, action = []*prepared{lazy(b, bp)}, profile.ActionResampled
			}
		}
	case GuardCut:
		b, bp, err := t.cutBatch(lm, raw, pred, room)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out, action = []*prepared{lazy(b, bp)}, profile.ActionCut
		}
	}
	if out == nil {
		next := 0
		var err error
		if out, err = t.splitBatch(w, lm, epoch, index, targets, pred, room, &next, out); err != nil {
			return nil, err
		}
		action = profile.ActionSplit
	}
	rec.Emit(profile.Event{T: profile.TypeOOM, Epoch: epoch, Batch: index, Requested: pred, Live: t.dev.Mem().Stats().Live, Budget: t.mem.budget, Action: action})
	rec.Span(profile.StageGuard, profile.LaneCompute, epoch, index, t0, rec.Now()-t0)
	t.mem.mu.Lock()
	t.mem.guardActs++
	t.mem.mu.Unlock()
	return out, nil
}

// splitBatch splits targets, whose batch is predicted to need pred bytes,
// over room, into the fewest equal parts that could fit (pred*(1+margin) /
// room, at least 2) and draws each part; a part still predicted not to fit
// is split again the same way. The parts are appended to out in order.
func (t *trainer) splitBatch(w *sample.Worker, lm memory.Linear, epoch, index int, targets []int32, pred, room int64, next *int, out []*prepared) ([]*prepared, error) {
	k := 2
	if room > 0 {
		k = max(k, int(math.Ceil(float64(pred)*(1+lm.Margin)/float64(room))))
	}
	k = min(k, len(targets))
	for i := 0; i < k; i++ {
		part := targets[i*len(targets)/k : (i+1)*len(targets)/k]
		b, err := w.SampleAttempt(epoch, index, splitAttempt+*next, part)
		*next++
		if err != nil {
			return nil, err
		}
		bp, _ := lm.Predict(shapeOf(b))
		if len(part) == 1 || lm.Fits(bp, room) {
			out = append(out, &prepared{epoch: epoch, index: index, raw: b, predicted: bp, need: lm.Need(bp), lazy: true})
			continue
		}
		if out, err = t.splitBatch(w, lm, epoch, index, part, bp, room, next, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// batchCutOrder is the order in which the guard's cut drops the edges of
// a training batch.
func (t *trainer) batchCutOrder(b *sample.Batch) memory.Order {
	return memory.Order{Rule: t.cfg.cutRule(), Seed: rng.Mix(t.cfg.Seed, uint64(b.Epoch), uint64(b.Index), 0x637574)}
}

// evalCutOrder is the order in which inference cutting drops the edges of
// the chunk whose destinations start at lo.
func (t *trainer) evalCutOrder(lo int) memory.Order {
	return memory.Order{Rule: t.cfg.cutRule(), Seed: rng.Mix(t.cfg.Seed, uint64(lo), 0x6576616c), MinKeep: t.cutMinKeep()}
}

// cutBatch drops edges of the batch's outermost block by the cut rule
// until the batch, predicted to need pred bytes, is predicted to fit room,
// keeping the most edges any prefix of the rule's order keeps. It orders
// only a prefix of the rule's order, long enough by an estimate of the
// edges per byte to shed: the previous cut's, else the fitted model's
// (each dropped edge saves its own bytes and, on average, a share of a
// source row; rules that drop the edges of repeated sources first free
// fewer), with a margin, four times longer while the cut does not fit. It
// returns nil when even dropping every edge does not fit.
func (t *trainer) cutBatch(lm memory.Linear, b *sample.Batch, pred, room int64) (*sample.Batch, int64, error) {
	blk := b.Blocks[0]
	ne := blk.NumEdges()
	shape := shapeOf(b)
	need := float64(pred)*(1+lm.Margin) - float64(room)
	rate := t.mem.cutRate
	if rate == 0 {
		perNode, perEdge := lm.Slopes(shape, 0)
		if save := perEdge + perNode*float64(blk.NumSrc-blk.NumDst)/float64(max(ne, 1)); save > 0 {
			rate = 1 / save
		}
	}
	n := ne/8 + 1
	if rate > 0 && need > 0 {
		n = int64(math.Min(1.5*need*rate, float64(ne))) + 64
	}
	o := t.batchCutOrder(b)
	var last int64
	fits := func(nsrc int, e int64) bool {
		shape.Nodes[0], shape.Edges[0] = nsrc, e
		last, _ = lm.Predict(shape)
		return lm.Fits(last, room)
	}
	for {
		n = min(n, ne)
		order, err := o.Prefix(blk, b.Nodes, t.deg, n)
		if err != nil {
			return nil, 0, err
		}
		out, keep, dropped, ok := memory.Cut(blk, order, fits)
		if !ok {
			if n == ne {
				return nil, 0, nil
			}
			n *= 4
			continue
		}
		nb := &sample.Batch{Epoch: b.Epoch, Index: b.Index, Nodes: b.Nodes, Blocks: slices.Clone(b.Blocks)}
		if keep == nil {
			return nb, pred, nil
		}
		if need > 0 {
			t.mem.cutRate = float64(dropped) / need
		}
		nb.Nodes = make([]int32, len(keep))
		for i, k := range keep {
			nb.Nodes[i] = b.Nodes[k]
		}
		nb.Blocks[0] = out
		return nb, last, nil
	}
}

// evalLayerBytes is the device memory one chunk of layer-wise inference
// holds at its peak in a layer mapping in to out columns, with ns sources
// and nd destinations: the input rows, the output, and the intermediate
// (the transformed sources when the layer transforms first, the
// destinations' aggregate otherwise). It is exact for GCN and GraphSAGE
// (TestEvalPeakAnalytic) and bounds the first layer's precomputed-aggregate
// path.
func evalLayerBytes(in, out, ns, nd int) int64 {
	mid := int64(nd) * int64(in)
	if in > out {
		mid = int64(ns) * int64(out)
	}
	return 4 * (int64(ns)*int64(in) + int64(nd)*int64(out) + mid)
}

// evalPeak is the largest evalLayerBytes over the model's layers.
func evalPeak(m *nn.Model, ns, nd int) int64 {
	var p int64
	for _, l := range m.Layers {
		in, out := l.Dims()
		p = max(p, evalLayerBytes(in, out, ns, nd))
	}
	return p
}

// evalResident is what stays on the device during evaluation outside the
// chunks: the model, and the evaluated snapshot's weights with overlapped
// evaluation.
func (t *trainer) evalResident() int64 {
	r := t.mem.resident
	if t.cfg.OverlapEval {
		r += r / 4
	}
	return r
}

// builtChunk is one inference chunk as nextEvalChunk builds it.
type builtChunk struct {
	evalChunk
	dropped int64 // edges cut from it
}

// rangeBlock is the inference block of destinations [lo, hi) with all
// their neighbors as sources.
func rangeBlock(g *graph.CSR, lo, hi int, scratch *sample.Scratch) (*graph.Block, []int32, error) {
	dst := make([]int32, hi-lo)
	for i := range dst {
		dst[i] = int32(lo + i)
	}
	return sample.FullBlock(g, dst, scratch)
}

// nextEvalChunk builds the inference chunk of the destinations from lo on:
// want of them (fewer at the graph's end) or, with a budget, as many as fit
// with their full neighborhood: smaller chunks cost no accuracy, only time
// (more chunks gather more source rows in all), so each chunk is the
// largest that fits, down to minEvalChunk destinations, whose edges are
// then cut to fit. A try that does not fit shrinks the chunk by the square
// of the ratio of the room to its need (its sources grow more slowly than
// its destinations). It returns the chunk and, with a budget, the size to
// try next: a sixteenth more than this one, so that chunk sizes follow the
// graph's density.
func (t *trainer) nextEvalChunk(m *nn.Model, scratch *sample.Scratch, lo, want int) (builtChunk, int, error) {
	g := t.ds.Graph
	n := min(want, g.N-lo)
	for {
		blk, src, err := rangeBlock(g, lo, lo+n, scratch)
		if err != nil {
			return builtChunk{}, 0, err
		}
		room := t.mem.budget - t.evalResident()
		if need := evalPeak(m, blk.NumSrc, blk.NumDst); t.mem.budget > 0 && n > minEvalChunk && need > room {
			r := max(0, float64(room)/float64(need))
			n = max(minEvalChunk, min(n-1, int(float64(n)*r*r)))
			continue
		}
		blk, src, dropped, err := t.cutChunk(m, blk, src, lo)
		if err != nil {
			return builtChunk{}, 0, err
		}
		next := want
		if t.mem.budget > 0 {
			next = n + n/16 + 1
		}
		return builtChunk{evalChunk{lo: lo, hi: lo + n, blk: blk, src: src}, dropped}, next, nil
	}
}

// Weights of cut inference blocks for GCN-normalized models
// (Config.CutNorm), with d the full graph's degrees and k those left after
// the cut (self-loops included). Mean aggregation (GraphSAGE) always
// averages over the neighbors kept.
const (
	// CutNormRenorm normalizes the cut graph as a graph of its own:
	// 1/sqrt(k_i k_j). The default: on Cora it cost the least accuracy of
	// the three (see the README).
	CutNormRenorm = "renorm"
	// CutNormScale weighs edge (i <- j) sqrt(d_i)/(k_i sqrt(d_j)): row i's
	// full-graph weights scaled by d_i/k_i, exactly as a neighbor-sampled
	// row is weighed in training, so that the row's sum estimates the full
	// row's from the neighbors kept.
	CutNormScale = "scale"
	// CutNormKeep keeps every kept edge's full-graph weight
	// 1/sqrt(d_i d_j): a row sums only what is left of it.
	CutNormKeep = "keep"
)

// cutMinKeep returns the neighbors every inference row keeps from a cut
// (Config.CutMinKeep), resolving 0 to the largest floor the cut leaves
// room for: with EvalCut, the largest k such that the neighbors beyond the
// first k of every row (self-loops aside) are at least the edges to cut,
// so that the cut spreads over the longest rows and every node keeps as
// many neighbors as any cut of that size can leave it; without EvalCut
// (cuts only to fit the budget), half the mean degree, rounded up.
func (t *trainer) cutMinKeep() int {
	switch k := t.cfg.CutMinKeep; {
	case k > 0:
		return k
	case k < 0:
		return 0
	}
	if t.mem.minKeepSet {
		return t.mem.minKeep
	}
	g := t.ds.Graph
	k := 0
	if g.N > 0 && t.cfg.EvalCut == 0 {
		k = int((g.NumEdges() + 2*int64(g.N) - 1) / (2 * int64(g.N)))
	} else if g.N > 0 {
		// rows[l] counts the rows of l neighbors; room(k) = sum over rows
		// of max(0, l-k) falls as k grows.
		var rows []int64
		for v := 0; v < g.N; v++ {
			l := 0
			for _, u := range g.Neighbors(int32(v)) {
				if u != int32(v) {
					l++
				}
			}
			if l >= len(rows) {
				rows = append(rows, make([]int64, l+1-len(rows))...)
			}
			rows[l]++
		}
		target := int64(math.Ceil(t.cfg.EvalCut * float64(g.NumEdges())))
		// Going down from the longest row: above holds the rows longer
		// than k, room the neighbors beyond k in them.
		var above, room int64
		for k = len(rows) - 1; k > 0; k-- {
			above += rows[k]
			room += above // every row longer than k-1 has one more beyond k-1
			if room >= target {
				k--
				break
			}
		}
		k = max(k, 0)
	}
	t.mem.minKeep, t.mem.minKeepSet = k, true
	return k
}

// prepareEvalBlocks prepares the inference chunks' blocks for model m
// (GCN weights, self-loops); cut says edges were dropped from some, whose
// GCN weights then follow Config.CutNorm.
func (t *trainer) prepareEvalBlocks(m *nn.Model, chunks []evalChunk, cut bool) {
	norm := t.cfg.CutNorm
	if norm == "" {
		norm = CutNormRenorm
	}
	deg := t.deg
	if cut && norm == CutNormRenorm {
		deg = cutDegrees(chunks, t.ds.NumNodes())
	}
	for i := range chunks {
		blk := m.PrepareBlock(chunks[i].blk, chunks[i].src, deg)
		if cut && norm == CutNormKeep && blk.Weights != nil {
			// PrepareBlock weighs edge (i <- j) of a row of k_i edges (its
			// self-loop included) sqrt(d_i)/(k_i sqrt(d_j)); times k_i/d_i
			// it is the full graph's 1/sqrt(d_i d_j).
			src := chunks[i].src
			for d := 0; d < blk.NumDst; d++ {
				f := float32(float64(blk.Indptr[d+1]-blk.Indptr[d]) / float64(t.deg[src[d]]))
				for e := blk.Indptr[d]; e < blk.Indptr[d+1]; e++ {
					blk.Weights[e] *= f
				}
			}
		}
		chunks[i].blk = blk
	}
}

// cutDegrees returns each node's degree + 1 (its self-loop) in the graph
// the inference chunks keep: the edges left in its own row. Every node is
// the destination of exactly one chunk.
func cutDegrees(chunks []evalChunk, n int) []float32 {
	deg := make([]float32, n)
	for _, ch := range chunks {
		for d := 0; d < ch.blk.NumDst; d++ {
			deg[ch.src[d]] = float32(ch.blk.Indptr[d+1]-ch.blk.Indptr[d]) + 1
		}
	}
	return deg
}

// cutChunk applies inference cutting to one chunk's raw block: EvalCut's
// fraction of its edges, and as many more as the budget needs, dropped by
// the cut rule. It returns the block and its source ids (unchanged when
// nothing is cut) and the edges dropped.
func (t *trainer) cutChunk(m *nn.Model, blk *graph.Block, src []int32, lo int) (*graph.Block, []int32, int64, error) {
	if t.mem.budget == 0 && t.cfg.EvalCut == 0 {
		return blk, src, 0, nil
	}
	limit := blk.NumEdges()
	if t.cfg.EvalCut > 0 {
		limit = int64(float64(limit) * (1 - t.cfg.EvalCut))
	}
	room := t.mem.budget - t.evalResident()
	fits := func(ns int, ne int64) bool {
		return ne <= limit && (t.mem.budget == 0 || evalPeak(m, ns, blk.NumDst) <= room)
	}
	if fits(blk.NumSrc, blk.NumEdges()) {
		return blk, src, 0, nil
	}
	order, err := t.evalCutOrder(lo).Prefix(blk, src, t.deg, blk.NumEdges())
	if err != nil {
		return nil, nil, 0, err
	}
	out, keep, dropped, ok := memory.Cut(blk, order, fits)
	if !ok {
		return nil, nil, 0, fmt.Errorf("inference chunk of %d nodes needs %s even without edges, over the memory budget %s: lower --eval-chunk",
			blk.NumDst, units.FormatSize(t.evalResident()+evalPeak(m, blk.NumDst, blk.NumDst)), units.FormatSize(t.mem.budget))
	}
	if keep == nil {
		return blk, src, 0, nil
	}
	ns := make([]int32, len(keep))
	for i, k := range keep {
		ns[i] = src[k]
	}
	return out, ns, dropped, nil
}
