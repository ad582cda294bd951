package train

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// Memory accounting: see the package documentation.

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

// memState is the run's memory accounting: the budget, the resident
// bytes, the peak predictor, the memory gate and every training batch's
// peak.
type memState struct {
	dev      device.Device
	rec      *profile.Recorder
	budget   int64 // 0 = unlimited
	resident int64 // parameters, gradients and optimizer moments
	// data is what the run keeps on the device beside the model from
	// start to end (see held and hold): the feature cache, the features
	// in device memory and the GPU sampler's graph.
	data int64
	pred *memory.Predictor
	// gate shares the room beyond the resident bytes and the evaluated
	// snapshot between training batches and an overlapped evaluation's
	// chunks (guard and overlapped evaluation only; nil otherwise).
	gate *memory.Gate
	// ahead is the prefetch room: the bytes of gathered batches sampler
	// workers may hold ahead of the trainer under the guard (nil: they
	// only sample). Set by planBudget; the guard, the gate and inference
	// count it as taken.
	ahead *memory.Gate

	mu    sync.Mutex
	peaks []int64 // training batch peaks
}

// init sets cfg's budget on dev, refusing one that model alone exceeds;
// guarded says whether the memory guard is on (with overlapped
// evaluation, it then shares the budget through the memory gate).
func (m *memState) init(cfg Config, dev device.Device, model *nn.Model, rec *profile.Recorder, guarded bool) error {
	m.dev, m.rec = dev, rec
	m.resident = model.ParamBytes()
	m.pred = memory.NewPredictor(predictorWindow, calibBatches)
	b := int64(cfg.MemBudget)
	if b <= 0 {
		return nil
	}
	if live := dev.Mem().Stats().Live; live > b {
		return fmt.Errorf("memory budget %s is smaller than the model's parameters, gradients and optimizer state (%s on the device)",
			units.FormatSize(b), units.FormatSize(live))
	}
	if guarded && cfg.OverlapEval {
		if b <= m.evalResident(cfg) {
			return fmt.Errorf("memory budget %s leaves no room beside the model's parameters, gradients and optimizer state and the evaluated snapshot of its weights (%s)",
				units.FormatSize(b), units.FormatSize(m.evalResident(cfg)))
		}
		m.gate = memory.NewGate(b - m.evalResident(cfg))
	}
	dev.Mem().SetBudget(b)
	m.budget = b
	return nil
}

// recordTrain records a trained batch's memory: in is its input bytes,
// stepPeak the step's own peak, predicted the guard's prediction of their
// sum (0 = none). The measurement also trains the predictor. It returns
// the peak recorded: the resident bytes and the run's data (held) plus
// the batch's own.
func (m *memState) recordTrain(epoch, index int, in, stepPeak, predicted int64, shape memory.Shape) int64 {
	own := in + stepPeak
	if len(shape.Nodes) > 0 {
		if p := m.pred.Observe(shape, own); predicted == 0 {
			predicted = p
		}
	}
	peak := m.held() + own
	m.mu.Lock()
	m.peaks = append(m.peaks, peak)
	m.mu.Unlock()
	if predicted > 0 {
		predicted += m.held()
	}
	m.rec.Mem(epoch, index, profile.PhaseTrain, peak, m.dev.Mem().Stats().Live, m.budget, predicted)
	return peak
}

// result fills the result's memory figures.
func (m *memState) result(res *Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.peaks); n > 0 {
		p := slices.Clone(m.peaks)
		slices.Sort(p)
		res.MaxBatchPeakBytes = p[n-1]
		res.P99BatchPeakBytes = p[int(math.Ceil(0.99*float64(n)))-1]
	}
	if m.pred.Scored() > 0 {
		mape := m.pred.MAPE()
		res.PredictorMAPE = &mape
	}
}

// held is what stays on the device beside every training batch: the
// resident bytes and the run's data.
func (m *memState) held() int64 { return m.resident + m.data }

// evalResident is what stays on the device during evaluation outside the
// chunks: the model, the run's data (feature cache, features and graph
// in device memory), and the evaluated snapshot's weights with
// overlapped evaluation.
func (m *memState) evalResident(cfg Config) int64 {
	r := m.resident
	if cfg.OverlapEval {
		r += r / 4
	}
	return r + m.data
}

// hold counts bytes more of the run's data (what held names: the feature
// cache, features and graph kept on the device) from now on: the memory
// gate (overlapped evaluation under the guard) and inference's room (in;
// nil: not made yet, it reads them when it is) shrink by them. what names
// the bytes for the error when no room is left.
func (m *memState) hold(cfg Config, in *inference, bytes int64, what string) error {
	m.data += bytes
	if m.gate != nil {
		room := m.budget - m.evalResident(cfg)
		if room <= 0 {
			return fmt.Errorf("memory budget %s leaves no room beside the model, the evaluated snapshot of its weights and %s (%s in all)",
				units.FormatSize(m.budget), what, units.FormatSize(m.evalResident(cfg)))
		}
		m.gate = memory.NewGate(room)
	}
	if in != nil {
		in.gate = m.gate
		reserveRoom(in, m.evalResident(cfg), 0)
	}
	return nil
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

// MaxLayers is the deepest model a Config accepts: far beyond GCNII's 64
// layers and the deepest GNNs published (about 1000), and small enough
// that per-layer settings (fanouts, weights) stay cheap to allocate.
const MaxLayers = 10000

// CheckModelSize refuses, before any dataset is loaded, a configuration
// whose model cannot fit whatever the dataset: its parameters and Adam
// state, estimated for one input feature and two classes (the least a
// dataset has), exceed the memory budget, or the memory available when
// there is none. Training checks again with the dataset's real sizes.
func CheckModelSize(cfg Config) error {
	spec := modelSpec(cfg, &data.Dataset{NumFeatures: 1, NumClasses: 2})
	return checkModelSize(spec, int64(cfg.MemBudget), data.AvailableMemory)
}

// checkModelSize refuses a model whose parameters, gradients and Adam
// moments (spec.ParamBytes) exceed the memory budget, or, when there is
// none (budget 0), the memory available returns (0 when unknown: no check).
// It runs before anything is allocated, so that a hostile or mistaken width
// gives an error with the estimate instead of a fatal out-of-memory error.
func checkModelSize(spec nn.Spec, budget int64, available func() int64) error {
	need, err := spec.ParamBytes()
	if err != nil {
		return err // it names the model
	}
	shape := fmt.Sprintf("%d layers, %d inputs", spec.Layers, spec.In)
	if spec.Kind == nn.KindGAT {
		shape = fmt.Sprintf("%d layers, %d heads, %d inputs", spec.Layers, max(spec.Heads, 1), spec.In)
	}
	what := fmt.Sprintf("model: %s with hidden %d needs about %s for its parameters and Adam state (%s)",
		spec.Kind, spec.Hidden, units.Bytes(need), shape)
	if budget > 0 {
		if need > budget {
			return fmt.Errorf("%s, more than the memory budget of %s", what, units.Bytes(budget))
		}
		return nil
	}
	if avail := available(); avail > 0 && need > avail {
		return fmt.Errorf("%s, more than the %s of memory available", what, units.Bytes(avail))
	}
	return nil
}
