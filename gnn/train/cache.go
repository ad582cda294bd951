package train

import (
	"encoding/json"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// cacheSetup is what setupCache did: the plan's line for the cache ("":
// no cache) and the frequency policy's pre-sampling pass, recorded once
// the run has started (dur 0: none).
type cacheSetup struct {
	note       string
	start, dur int64
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
func setupCache(t *trainer) (cacheSetup, error) {
	b, err := featcache.ParseBudget(t.cfg.CacheBytes)
	if err != nil || b.IsZero() {
		return cacheSetup{}, err
	}
	if t.gpu.allOnDevice() {
		return cacheSetup{note: "feature cache: none, the whole feature matrix is in device memory (feature store device)"}, nil
	}
	n, f := t.ds.NumNodes(), t.ds.NumFeatures
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
		counts, err := presample(t)
		if err != nil {
			return cacheSetup{}, fmt.Errorf("feature cache frequency pass: %w", err)
		}
		s.dur = max(t.rec.Now()-s.start, 1)
		order = featcache.ByCount(counts)
		covered = featcache.Covered(order, rows, counts)
	} else {
		policy, order = featcache.PolicyDegree, featcache.ByDegree(t.ds.Graph)
	}
	c, err := featcache.New(t.dev, t.x, f, order[:rows])
	if err != nil {
		return cacheSetup{}, err
	}
	t.load.cache, t.load.tally = c, &featcache.Tally{}
	t.cache = featcache.NewReport(c, policy, n)
	s.note = t.cache.Note(covered)
	return s, t.mem.hold(t.cfg, t.inf, c.Bytes(), "the feature cache")
}

// presample is the frequency policy's pre-sampling pass: it samples one
// epoch's batches with the run's sampler and counts how often each node's
// feature row is an input row. It draws epoch 0, which training never
// uses (batches depend only on the seed, epoch and index), so the ranking
// is an estimate from a draw like the training epochs', not their own
// accesses, and training's draws are untouched.
func presample(t *trainer) ([]uint32, error) {
	batches, err := sample.Batches(t.split.Train, t.cfg.BatchSize, t.cfg.Seed, 0, true)
	if err != nil {
		return nil, err
	}
	w := t.sampler.NewWorker()
	counts := make([]uint32, t.ds.NumNodes())
	for i, targets := range batches {
		b, err := w.Sample(0, i, targets)
		if err != nil {
			return nil, err
		}
		featcache.Count(counts, b.Nodes)
	}
	return counts, nil
}
