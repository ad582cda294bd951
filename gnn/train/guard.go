package train

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// memGuard keeps every training batch under the budget by predicting its
// peak from its shape before it runs (Config.MemGuard): a batch predicted
// not to fit is re-drawn, cut or split, as the OOM policy plans. It is nil
// when the guard is off; its methods then pass every batch as it is.
type memGuard struct {
	cfg     Config
	dev     device.Device
	rec     *profile.Recorder
	mem     *memState
	policy  *oomPolicy
	sampler *sample.Neighbor
	deg     []float32 // degree + 1 per node (the cut rules' order)
	train   []int32   // the training nodes (calibration's probes)
	w       *sample.Worker
	// cutRate is the edges the guard's last cut dropped per byte it had
	// to shed (0 before the first cut): the next cut's first estimate.
	cutRate float64
}

// on reports whether the guard is on.
func (g *memGuard) on() bool { return g != nil }

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
func (g *memGuard) calibrate(ld batchLoader) error {
	if g == nil {
		return nil
	}
	scratch, err := nn.New(g.dev, ld.model.Spec)
	if err != nil {
		return fmt.Errorf("memory guard calibration: %w", err)
	}
	defer scratch.Free(g.dev)
	ld.model, ld.rec, ld.guard, ld.tally = scratch, nil, nil, nil
	st := stepper{model: scratch, opt: nn.NewAdam(float32(g.cfg.LR), 0), seed: g.cfg.Seed}
	batches, err := sample.Batches(g.train, g.cfg.BatchSize, g.cfg.Seed, 0, true)
	if err != nil {
		return err
	}
	targets := batches[0]
	w := g.worker()
	// Probe sizes spread over (0, hi]; a probe that runs out of memory
	// lowers hi below it and the next probes spread over what fits.
	const probes = calibBatches + memory.WarmScored
	hi, obs := max(1, len(targets)/2), 0
	for k := 0; obs < probes && k < 4*probes; k++ {
		m := max(1, hi*(obs+1)/probes)
		p := ld.prepareAttempt(w, 0, k, 0, targets[:m], profile.LaneCompute)
		err := p.err
		var in, peak int64
		if err == nil {
			scope := device.NewScope()
			_, _, err = st.step(device.Scoped(g.dev, scope), 0, k, p.blocks, p.x, nil, p.labels)
			in, peak = p.inBytes(), scope.Peak()
		}
		p.free(g.dev)
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
		g.mem.pred.Observe(shapeOf(p.raw), in+peak)
		obs++
	}
	if !g.mem.pred.Ready() {
		return fmt.Errorf("memory guard calibration: even the smallest probe batches do not fit the memory budget %s", units.FormatSize(g.mem.budget))
	}
	g.mem.pred.ResetMAPE()
	return nil
}

// worker is the guard's own sampler state (calibration, re-draws, splits).
func (g *memGuard) worker() *sample.Worker {
	if g.w == nil {
		g.w = g.sampler.NewWorker()
	}
	return g.w
}

// room returns the bytes a batch may use, its input included: the budget
// minus everything else live, or, with the memory gate, the gate's
// capacity (the batch waits for its share there). in is the bytes of the
// batch's input already on the device, pooled those of it gathered ahead
// in the prefetch room (memState.ahead): the room counts the prefetch
// room as taken whole, by this batch's input and the batches gathered
// after it, so only pooled bytes come back to the batch.
func (g *memGuard) room(in, pooled int64) int64 {
	switch {
	case g.mem.gate != nil:
		return g.mem.gate.Capacity() + pooled
	case g.mem.ahead != nil:
		return g.mem.budget - g.mem.held() - g.mem.ahead.Capacity() + pooled
	}
	return g.mem.budget - (g.dev.Mem().Stats().Live - in)
}

// tooLarge reports whether a sampled batch is predicted not to fit the
// budget even with nothing but the model and the feature cache on the
// device (false before the predictor is ready).
func (g *memGuard) tooLarge(b *sample.Batch) bool {
	lm, ok := g.mem.pred.Model()
	if !ok {
		return false
	}
	pred, ok := lm.Predict(shapeOf(b))
	return ok && !lm.Fits(pred, g.mem.budget-g.mem.held())
}

// deferLoad reports whether a freshly sampled batch should reach the guard
// before its features are gathered: the guard is on and the batch is
// predicted not to fit the budget even with nothing but the model on the
// device. The guard then replaces it without having gathered (and freed)
// its input. With the memory gate every batch is deferred: its features
// are gathered only once the gate has granted its bytes.
func (g *memGuard) deferLoad(b *sample.Batch) bool {
	if g == nil {
		return false
	}
	return g.mem.gate != nil || g.tooLarge(b)
}

// guardAct is what the guard did to one batch: its action and the peak
// predicted for the batch as drawn. The guard event that reports it is
// recorded once the batches trained in its place have measured their
// peaks (guardActed).
type guardAct struct {
	action    GuardAction
	predicted int64
}

// guard returns the batches to train in place of p: p itself when the
// guard is off or p is predicted to fit (act nil), otherwise p re-drawn,
// cut or split (not yet loaded: trainOne loads them one at a time) and
// what the guard did, recording a guard span. It tries the actions of the
// OOM policy's plan in turn (see the package documentation).
func (g *memGuard) guard(p *prepared) (parts []*prepared, act *guardAct, err error) {
	if g == nil || p.raw == nil || (p.err != nil && !device.IsOOM(p.err)) {
		return []*prepared{p}, nil, nil
	}
	lm, ok := g.mem.pred.Model()
	if !ok {
		return []*prepared{p}, nil, nil
	}
	pred, _ := lm.Predict(shapeOf(p.raw))
	if p.err == nil && lm.Fits(pred, g.room(p.inBytes(), p.pooled)) {
		p.predicted, p.need = pred, lm.Need(pred)
		return []*prepared{p}, nil, nil
	}
	rec := g.rec
	t0 := rec.Now()
	epoch, index := p.epoch, p.index
	raw := p.raw
	targets := raw.Targets()
	p.free(g.dev)
	room := g.room(0, 0)
	w := g.worker()
	lazy := func(b *sample.Batch, pr int64) []*prepared {
		return []*prepared{{epoch: epoch, index: index, raw: b, predicted: pr, need: lm.Need(pr), lazy: true}}
	}
	for _, action := range g.policy.guardPlan() {
		var out []*prepared
		switch action {
		case ActionResampled:
			for a := 1; a <= maxResample && out == nil; a++ {
				b, err := w.SampleAttempt(epoch, index, a, targets)
				if err != nil {
					return nil, nil, err
				}
				if bp, _ := lm.Predict(shapeOf(b)); lm.Fits(bp, room) {
					out = lazy(b, bp)
				}
			}
		case ActionCut:
			b, bp, err := g.cutBatch(lm, raw, pred, room)
			if err != nil {
				return nil, nil, err
			}
			if b != nil {
				out = lazy(b, bp)
			}
		case ActionSplit:
			next := 0
			var err error
			if out, err = g.splitBatch(w, lm, epoch, index, targets, pred, room, &next, nil); err != nil {
				return nil, nil, err
			}
		}
		if out != nil || action == ActionSplit { // a split always stands
			rec.Span(profile.StageGuard, profile.LaneCompute, epoch, index, t0, rec.Now()-t0)
			return out, &guardAct{action: action, predicted: g.mem.held() + pred}, nil
		}
	}
	return nil, nil, errors.New("memory guard: no action planned")
}

// splitBatch splits targets, whose batch is predicted to need pred bytes,
// over room, into the fewest equal parts that could fit (pred*(1+margin) /
// room, at least 2) and draws each part; a part still predicted not to fit
// is split again the same way. The parts are appended to out in order.
func (g *memGuard) splitBatch(w *sample.Worker, lm memory.Linear, epoch, index int, targets []int32, pred, room int64, next *int, out []*prepared) ([]*prepared, error) {
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
		if out, err = g.splitBatch(w, lm, epoch, index, part, bp, room, next, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// batchCutOrder is the order in which the guard's cut drops the edges of
// a training batch.
func (g *memGuard) batchCutOrder(b *sample.Batch) memory.Order {
	return memory.Order{Rule: g.cfg.cutRule(), Seed: rng.Mix(g.cfg.Seed, uint64(b.Epoch), uint64(b.Index), 0x637574)}
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
func (g *memGuard) cutBatch(lm memory.Linear, b *sample.Batch, pred, room int64) (*sample.Batch, int64, error) {
	blk := b.Blocks[0]
	ne := blk.NumEdges()
	shape := shapeOf(b)
	need := float64(pred)*(1+lm.Margin) - float64(room)
	rate := g.cutRate
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
	o := g.batchCutOrder(b)
	var last int64
	fits := func(nsrc int, e int64) bool {
		shape.Nodes[0], shape.Edges[0] = nsrc, e
		last, _ = lm.Predict(shape)
		return lm.Fits(last, room)
	}
	for {
		n = min(n, ne)
		order, err := o.Prefix(blk, b.Nodes, g.deg, n)
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
			g.cutRate = float64(dropped) / need
		}
		nb.Nodes = make([]int32, len(keep))
		for i, k := range keep {
			nb.Nodes[i] = b.Nodes[k]
		}
		nb.Blocks[0] = out
		return nb, last, nil
	}
}

// trainGrant is the gate grant of a training batch: the guard's prediction
// of its own bytes with the safety margin, less the input bytes it holds
// in the prefetch room, or the gate's whole capacity when the guard made
// none.
func (g *memGuard) trainGrant(p *prepared) int64 {
	if p.need > 0 {
		return max(p.need-p.pooled, 0)
	}
	return g.mem.gate.Capacity()
}
