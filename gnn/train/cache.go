package train

import (
	"encoding/json"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// cacheSetup is what setupCache did: the plan's line for the cache ("":
// no cache), the frequency policy's pre-sampling pass, recorded once the
// run has started (dur 0: none), and the cache with its report and the
// tally of its epochs (nil without a cache).
type cacheSetup struct {
	note       string
	start, dur int64
	cache      *featcache.Cache
	report     *featcache.Report
	tally      *featcache.Tally
}

// cacheDeps is what setupCache reads: the run's config (the cache's
// budget and policy, what memState.hold counts), the device, the
// recorder, the features as the model sees them (n rows, f wide) and the
// graph, where a GPU keeps them, the memory accounting and the inference
// that count the cache as resident, and the sampler and batch draw of the
// frequency policy's pre-sampling pass.
type cacheDeps struct {
	cfg     Config
	dev     device.Device
	rec     *profile.Recorder
	x       []float32
	n, f    int
	g       *graph.CSR
	gpu     *gpuData
	mem     *memState
	inf     *inference
	sampler *sample.Neighbor
	draw    batchDraw
}

// passAttrs marks the setup span of the frequency policy's pre-sampling
// pass.
var passAttrs = json.RawMessage(`{"part":"cache frequency pass"}`)

// record records the pre-sampling pass as a setup span of its own (setup
// spans are outside every epoch).
func (s cacheSetup) record(rec *profile.Recorder) {
	if s.dur > 0 {
		rec.SpanAttrs(profile.StageSetup, profile.LaneCompute, 0, 0, s.start, s.dur, passAttrs)
	}
}

// setupCache builds the feature cache Config.CacheBytes asks for, if any,
// before the memory guard calibrates: its rows are live device bytes for
// the whole run, so calibration, the budget plan, the guard's room and
// evaluation's chunks all count them as resident beside the model
// (memState.hold). Only training batches' input gathers read it.
func setupCache(t cacheDeps) (cacheSetup, error) {
	b, err := featcache.ParseBudget(t.cfg.CacheBytes)
	if err != nil || b.IsZero() {
		return cacheSetup{}, err
	}
	if t.gpu.allOnDevice() {
		return cacheSetup{note: "feature cache: none, the whole feature matrix is in device memory (feature store device)"}, nil
	}
	n, f := t.n, t.f
	rows := b.Rows(n, f)
	if rows == 0 {
		return cacheSetup{note: fmt.Sprintf("feature cache: %s holds no feature row (%s a row): no cache", b, units.FormatSize(4*int64(f)))}, nil
	}
	bytes := 4 * int64(rows) * int64(f)
	if live := t.dev.Mem().Stats().Live; t.mem.budget > 0 && live+bytes > t.mem.budget {
		return cacheSetup{}, fmt.Errorf("feature cache of %s (%d rows, %s) does not fit the memory budget %s beside the model's parameters, gradients and optimizer state (%s): lower --cache-bytes or raise --mem-budget",
			b, rows, units.FormatSize(bytes), units.FormatSize(t.mem.budget), units.FormatSize(live))
	}
	var s cacheSetup
	policy, covered := t.cfg.CachePolicy, -1.0
	var order []int32
	if policy == featcache.PolicyFrequency {
		s.start = t.rec.Now()
		counts, err := presample(t.sampler, t.draw, n)
		if err != nil {
			return cacheSetup{}, fmt.Errorf("feature cache frequency pass: %w", err)
		}
		s.dur = max(t.rec.Now()-s.start, 1)
		order = featcache.ByCount(counts)
		covered = featcache.Covered(order, rows, counts)
	} else {
		policy, order = featcache.PolicyDegree, featcache.ByDegree(t.g)
	}
	c, err := featcache.New(t.dev, t.x, f, order[:rows])
	if err != nil {
		return cacheSetup{}, err
	}
	s.cache, s.tally = c, &featcache.Tally{}
	s.report = featcache.NewReport(c, policy, n)
	s.note = s.report.Note(covered)
	return s, t.mem.hold(t.cfg, t.inf, c.Bytes(), "the feature cache")
}

// presample is the frequency policy's pre-sampling pass: it samples one
// epoch's batches of draw with the run's sampler and counts how often each
// of the n nodes' feature row is an input row. It draws epoch 0, which training never
// uses (batches depend only on the seed, epoch and index), so the ranking
// is an estimate from a draw like the training epochs', not their own
// accesses, and training's draws are untouched.
func presample(sampler *sample.Neighbor, draw batchDraw, n int) ([]uint32, error) {
	batches, err := draw.batches(0)
	if err != nil {
		return nil, err
	}
	w := sampler.NewWorker()
	counts := make([]uint32, n)
	for i, targets := range batches {
		b, err := w.Sample(0, i, targets)
		if err != nil {
			return nil, err
		}
		featcache.Count(counts, b.Nodes)
	}
	return counts, nil
}
