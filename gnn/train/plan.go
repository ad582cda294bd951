package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile/units"
)

// planBatches is how many full training batches planBudget samples to
// size a batch's predicted bytes and input.
const planBatches = 8

// budgetSizes is what planBudget knows of a full training batch: the
// largest predicted need (the guard's prediction with its safety margin,
// input included) and the largest gathered input over planBatches.
type budgetSizes struct {
	need, in int64
}

// planBudget decides, once the memory guard is calibrated and before the
// first epoch, how a guarded run's optimizations share its memory budget,
// and returns one line per decision (none without a budget, the guard, or
// an optimization that holds memory beside the training batch):
//
//   - Prefetch: sampler workers gather batches ahead into a prefetch room
//     (memState.ahead) of up to the pipeline's depth of full batches,
//     taking at most half of what the budget leaves beside a training
//     batch; when not even one batch fits, they only sample and the
//     trainer gathers each batch once the guard has passed it.
//   - Overlapped evaluation: its chunks are sized to fit beside a training
//     batch and the prefetch room; when that forces inference to cut edges
//     that evaluating at the epoch's end would not, the evaluation is
//     deferred to the epoch's end.
//
// The guard, the memory gate and inference count the prefetch room as
// taken whole, so no consumer's room depends on what the others hold at
// the moment it decides. It builds inference chunks only to judge an
// overlapped evaluation's cuts; otherwise the setup builds them once.
func planBudget(p *budgetPlanner) ([]string, error) {
	return p.plan()
}

// budgetPlanner makes a trainer's budget plan (planBudget), built once by
// the trainer's setup; cfg points at the trainer's config, which a
// deferred evaluation changes.
type budgetPlanner struct {
	cfg   *Config
	mem   *memState
	inf   *inference
	guard *memGuard
	model *nn.Model
	train []int32 // the training nodes
	f     int     // the feature width
}

// plan is planBudget.
func (t *budgetPlanner) plan() ([]string, error) {
	if t.guard == nil || t.mem.budget <= 0 || (t.pipelineDepth() == 0 && !t.cfg.OverlapEval) {
		return nil, nil
	}
	sz, err := t.batchSizes()
	if err != nil || sz.need == 0 {
		return nil, err
	}
	var notes []string
	room := t.mem.budget - t.mem.evalResident(*t.cfg)
	if depth := t.pipelineDepth(); depth > 0 {
		k := min(int64(depth), max(room-sz.need, 0)/2/max(sz.in, 1))
		if k > 0 {
			t.mem.ahead = memory.NewGate(k * sz.in)
			notes = append(notes, fmt.Sprintf("prefetch: %d of %d batches gathered ahead (%s reserved, %s a batch)",
				k, depth, units.FormatSize(k*sz.in), units.FormatSize(sz.in)))
		} else if sz.need >= room {
			notes = append(notes, fmt.Sprintf("prefetch: batches wait sampled, gathered by the trainer: a full training batch (%s) needs more than the %s the budget leaves beside the model (the guard splits it)",
				units.FormatSize(sz.need), units.FormatSize(room)))
		} else {
			notes = append(notes, fmt.Sprintf("prefetch: batches wait sampled, gathered by the trainer: one gathered batch (%s) is more than half the %s the budget leaves beside a training batch (%s)",
				units.FormatSize(sz.in), units.FormatSize(room-sz.need), units.FormatSize(sz.need)))
		}
	}
	note, err := t.planEval(sz)
	if note != "" {
		notes = append(notes, note)
	}
	return notes, err
}

// planEval sizes the inference chunks beside what planBudget reserved and
// decides whether an overlapped evaluation runs overlapped (see
// planBudget), returning its decision's line ("" when there was none).
func (t *budgetPlanner) planEval(sz budgetSizes) (string, error) {
	ahead := int64(0)
	if t.mem.ahead != nil {
		ahead = t.mem.ahead.Capacity()
	}
	if !t.cfg.OverlapEval {
		reserveRoom(t.inf, t.mem.evalResident(*t.cfg), ahead)
		return "", nil
	}
	t.setGate(memory.NewGate(t.mem.budget - t.mem.evalResident(*t.cfg) - ahead))
	cut, err := t.chunkCut(t.mem.evalResident(*t.cfg), ahead+sz.need)
	if err == nil && (cut == 0 || t.cfg.EvalCut > 0) {
		return "overlapped evaluation: chunks sized to run beside " + beside(sz.need, ahead), nil
	}
	// Deferred: evaluation runs alone after each epoch, beside the
	// prefetch room only.
	overlapped := *t.cfg
	t.cfg.OverlapEval = false
	t.setGate(nil)
	deferredCut, derr := t.chunkCut(t.mem.evalResident(*t.cfg), ahead)
	if derr != nil {
		return "", derr
	}
	if err == nil && deferredCut >= cut { // deferring does not help: overlap after all
		*t.cfg = overlapped
		t.setGate(memory.NewGate(t.mem.budget - t.mem.evalResident(*t.cfg) - ahead))
		_, err = t.chunkCut(t.mem.evalResident(*t.cfg), ahead+sz.need)
		return "overlapped evaluation: chunks beside a training batch cut no more edges than evaluating alone", err
	}
	why := fmt.Sprintf("beside a training batch (%s) its chunks would have to cut %d edges", units.FormatSize(sz.need), cut)
	if err != nil {
		why = "not even a chunk of one node fits beside " + beside(sz.need, ahead)
	}
	return "overlap_eval on->off: evaluation deferred to each epoch's end: " + why, nil
}

// chunkCut builds the inference chunks afresh for a room of resident
// bytes beside them with reserve of it left to other consumers (see
// rebuildChunks) and returns the edges they cut.
func (t *budgetPlanner) chunkCut(resident, reserve int64) (int64, error) {
	cut, err := rebuildChunks(t.inf, t.model, resident, reserve)
	if err != nil {
		return 0, fmt.Errorf("inference blocks: %w", err)
	}
	return cut, nil
}

// beside names what an overlapped evaluation's chunks run beside: a
// training batch of need bytes and a prefetch room of ahead bytes.
func beside(need, ahead int64) string {
	s := fmt.Sprintf("a training batch (%s)", units.FormatSize(need))
	if ahead > 0 {
		s += fmt.Sprintf(" and the prefetch room (%s)", units.FormatSize(ahead))
	}
	return s
}

// setGate replaces the memory gate the trainer and inference share (nil:
// none).
func (t *budgetPlanner) setGate(g *memory.Gate) {
	t.mem.gate, t.inf.gate = g, g
}

// pipelineDepth is the number of batches sampler workers prepare ahead
// (0 without workers): as startPipeline sets it.
func (t *budgetPlanner) pipelineDepth() int {
	w := t.cfg.SamplerWorkers
	if w <= 0 || t.cfg.Sampler != SamplerNeighbor {
		return 0
	}
	return pipelineStart{workers: w, prefetch: t.cfg.Prefetch}.depth()
}

// batchSizes samples up to planBatches full training batches (the
// calibration's epoch 0, which training never uses) and returns the
// largest predicted need and input among them (zero when the predictor
// cannot predict).
func (t *budgetPlanner) batchSizes() (budgetSizes, error) {
	lm, ok := t.mem.pred.Model()
	if !ok || t.guard.sampler == nil {
		return budgetSizes{}, nil
	}
	batches, err := sample.Batches(t.train, t.cfg.BatchSize, t.cfg.Seed, 0, true)
	if err != nil {
		return budgetSizes{}, err
	}
	w := t.guard.worker()
	var sz budgetSizes
	for i, targets := range batches[:min(len(batches), planBatches)] {
		b, err := w.SampleAttempt(0, i, 0, targets)
		if err != nil {
			return budgetSizes{}, err
		}
		pred, ok := lm.Predict(shapeOf(b))
		if !ok {
			return budgetSizes{}, nil
		}
		sz.need = max(sz.need, lm.Need(pred))
		sz.in = max(sz.in, inputBytes(b, t.f))
	}
	return sz, nil
}

// reserveRoom sets what stays on the device outside inference's chunks,
// resident, and the bytes of it the chunks leave to other consumers,
// reserve; chunks built for another room are dropped (the setup builds
// them for this one).
func reserveRoom(in *inference, resident, reserve int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.resident, in.reserve = resident+reserve, reserve
	in.cache, in.seen, in.cutEdges = nil, nil, 0
}

// rebuildChunks is reserveRoom, then builds the chunks for model m
// (cached as chunks caches them) and returns the edges they cut.
func rebuildChunks(in *inference, m *nn.Model, resident, reserve int64) (int64, error) {
	reserveRoom(in, resident, reserve)
	if _, err := in.chunks(m); err != nil {
		return 0, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.cutEdges, nil
}
