package train

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/profile"
)

// cachedRun is one run kept open to the end: its result, plan, events and
// final weights.
type cachedRun struct {
	res     *Result
	plan    []string
	evs     []profile.Event
	weights [][]float32
}

// runKeepingWeights trains cfg as Run does and also returns the trained
// weights; nothing may stay live on the device afterwards.
func runKeepingWeights(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split) cachedRun {
	t.Helper()
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	dev := cpu.New(2, 0)
	tr, err := newTrainer(cfg, ds, split, dev, rec)
	if err != nil {
		t.Fatal(err)
	}
	var r cachedRun
	tr.onStart = func(p []string) {
		r.plan = p
		rec.RunStart("r", "s", "v", nil, nil, p...)
	}
	r.res, err = tr.run(context.Background(), nil)
	if err == nil {
		r.weights = hostParams(dev, tr.model)
	}
	tr.close()
	if cerr := rec.Close("", err, nil); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes live after the run: the cache was not freed", live)
	}
	r.evs = sink.evs
	return r
}

// trainBatches is the sequence of trained batches: (epoch, batch, the
// batch's own bytes: its peak less what is held beside it).
func trainBatches(evs []profile.Event, held int64) [][3]int64 {
	var out [][3]int64
	for _, e := range eventsOf(evs, profile.TypeMem, profile.PhaseTrain) {
		out = append(out, [3]int64{int64(e.Epoch), int64(e.Batch), e.Peak - held})
	}
	return out
}

// TestCacheKeepsTrainingIdentical: with the feature cache (each policy,
// each schedule that takes one) a run trains bit for bit what it trains
// without: the same batches in the same order, the same losses and
// accuracies every epoch, the same final weights.
func TestCacheKeepsTrainingIdentical(t *testing.T) {
	ds := plantedPartition(t, 800, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	sage := Defaults("sage")
	sage.Epochs, sage.Hidden, sage.BatchSize, sage.Fanouts = 3, 16, 16, []int{5, 3}
	pipelined := sage
	pipelined.SamplerWorkers, pipelined.Prefetch = 2, 3
	gas := gasConfig("gcn")
	gas.Epochs = 3
	for _, tc := range []struct {
		name, size string
		policy     featcache.Policy
		cfg        Config
	}{
		{"sampled/degree", "30%", "", sage},
		{"sampled/frequency", "3KiB", featcache.PolicyFrequency, sage},
		{"pipelined/frequency", "50%", featcache.PolicyFrequency, pipelined},
		{"gas/degree", "25%", featcache.PolicyDegree, gas},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := runKeepingWeights(t, tc.cfg, ds, split)
			c := tc.cfg
			c.CacheBytes, c.CachePolicy = tc.size, tc.policy
			got := runKeepingWeights(t, c, ds, split)
			rc := got.res.Cache
			if rc == nil || rc.Rows == 0 || rc.Hits == 0 || rc.Misses == 0 {
				t.Fatalf("cache report %+v: want hits and misses", rc)
			}
			if len(got.plan) == 0 || !strings.HasPrefix(got.plan[0], "feature cache: "+string(rc.Policy)+" policy") {
				t.Errorf("plan %q does not start with the cache", got.plan)
			}
			if !slices.Equal(trainBatches(got.evs, got.res.ParamBytes+rc.Bytes), trainBatches(want.evs, want.res.ParamBytes)) {
				t.Error("the trained batches differ")
			}
			if want.res.TestAcc != got.res.TestAcc || want.res.ValLoss != got.res.ValLoss || len(want.res.History) != len(got.res.History) {
				t.Fatalf("result: test %v val loss %v with the cache, %v %v without", got.res.TestAcc, got.res.ValLoss, want.res.TestAcc, want.res.ValLoss)
			}
			for i, w := range want.res.History {
				g := got.res.History[i]
				if g.Loss != w.Loss || g.TrainAcc != w.TrainAcc || g.ValLoss != w.ValLoss || g.ValAcc != w.ValAcc || g.TestAcc != w.TestAcc {
					t.Errorf("epoch %d: %+v with the cache, %+v without", w.Epoch, g, w)
				}
				if w.Cache != nil || g.Cache == nil || *g.Cache != rc.Epochs[i].Outcome {
					t.Errorf("epoch %d: cache outcome %+v, report %+v", w.Epoch, g.Cache, rc.Epochs[i])
				}
			}
			for i := range want.weights {
				if !slices.Equal(want.weights[i], got.weights[i]) {
					t.Fatalf("parameter %d differs", i)
				}
			}
		})
	}
}

// TestCacheEvents: every training batch's cache event counts its input
// rows (hits the cached nodes among them) and the misses' bytes; a cache
// span lies inside each transfer span; the totals agree with the result
// and the profile summary, and the frequency policy's pre-sampling pass
// is a setup span of its own, outside every epoch.
func TestCacheEvents(t *testing.T) {
	ds := plantedPartition(t, 800, 4, 5)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults("sage")
	cfg.Epochs, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = 2, 16, 16, []int{5, 3}
	cfg.CacheBytes, cfg.CachePolicy = "20%", featcache.PolicyFrequency
	r := runKeepingWeights(t, cfg, ds, split)
	f := int64(ds.NumFeatures)

	// The cached rows: the pre-sampling pass's ranking, redone here.
	nb, err := sample.NewNeighbor(ds.Graph, cfg.Fanouts, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	w := nb.NewWorker()
	counts := make([]uint32, ds.NumNodes())
	sampleEpoch := func(epoch int, each func(i int, b *sample.Batch)) {
		batches, err := sample.Batches(split.Train, cfg.BatchSize, cfg.Seed, epoch, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, targets := range batches {
			b, err := w.Sample(epoch, i, targets)
			if err != nil {
				t.Fatal(err)
			}
			each(i, b)
		}
	}
	sampleEpoch(0, func(_ int, b *sample.Batch) { featcache.Count(counts, b.Nodes) })
	cached := map[int32]bool{}
	for _, v := range featcache.ByCount(counts)[:r.res.Cache.Rows] {
		cached[v] = true
	}
	evs := eventsOf(r.evs, profile.TypeCache, "")
	k := 0
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		sampleEpoch(epoch, func(i int, b *sample.Batch) {
			var hits int64
			for _, v := range b.Nodes {
				if cached[v] {
					hits++
				}
			}
			misses := int64(len(b.Nodes)) - hits
			if k >= len(evs) {
				t.Fatalf("%d cache events", len(evs))
			}
			e := evs[k]
			k++
			if e.Epoch != epoch || e.Batch != i || e.Hits != hits || e.Misses != misses || e.BytesH2D != misses*f*4 {
				t.Fatalf("cache event %+v; want epoch %d batch %d, %d hits, %d misses, %d bytes", e, epoch, i, hits, misses, misses*f*4)
			}
		})
	}
	if k != len(evs) {
		t.Fatalf("%d cache events for %d batches", len(evs), k)
	}
	transfers, caches := spansNamed(r.evs, profile.StageTransfer), spansNamed(r.evs, profile.StageCache)
	if len(caches) != len(evs) || len(transfers) != len(evs) {
		t.Fatalf("%d cache spans, %d transfer spans for %d batches", len(caches), len(transfers), len(evs))
	}
	for i, c := range caches {
		tr := transfers[i]
		if c.Batch != tr.Batch || c.Start < tr.Start || c.Start+c.Dur > tr.Start+tr.Dur {
			t.Fatalf("cache span %+v outside its transfer span %+v", c, tr)
		}
	}
	sum := profile.Summarize(r.evs)
	if sum.Cache == nil || sum.Cache.CacheCount != (profile.CacheCount{Hits: r.res.Cache.Hits, Misses: r.res.Cache.Misses, BytesH2D: r.res.Cache.BytesH2D}) {
		t.Errorf("summary %+v, result %+v", sum.Cache, r.res.Cache)
	}
	var pass, setup []profile.Event
	for _, e := range spansNamed(r.evs, profile.StageSetup) {
		if bytes.Equal(e.Attrs, passAttrs) {
			pass = append(pass, e)
		} else {
			setup = append(setup, e)
		}
	}
	if len(pass) != 1 || len(setup) != 1 || pass[0].Start+pass[0].Dur > setup[0].Start {
		t.Fatalf("setup spans: pass %+v, rest %+v: want one each, in turn", pass, setup)
	}
	if len(sum.Epochs) != cfg.Epochs || sum.Epochs[0].Epoch != 1 {
		t.Errorf("epochs in the summary: %+v", sum.Epochs)
	}
}

// TestCacheUnderGuard: with the cache resident, the memory guard still
// keeps every training batch and inference chunk under the budget (the
// recorded peaks count the cache): in turn and with prefetching workers
// when the budget leaves beside the cache the room that makes the guard
// act without it, and with batches gathered ahead into the prefetch room
// and an overlapped evaluation sharing a larger budget through the memory
// gate.
func TestCacheUnderGuard(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 60, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := memConfig(nn.KindSAGE)
	median := medianTrainPeak(t, cfg, ds, split)
	matrix := int64(len(ds.X)) * 4
	cfg.MemGuard, cfg.CacheBytes = GuardSplit, "100%"
	for i, tc := range []struct {
		budget   int64
		workers  int
		overlap  bool
		planned  string // a line the plan must hold
		guarding bool   // whether the guard must act
	}{
		{median + matrix, 0, false, "", true},
		{median + matrix, 2, false, "prefetch: batches wait sampled", true},
		{median*8/5 + matrix, 2, true, "and the prefetch room", false},
	} {
		c := cfg
		c.MemBudget, c.SamplerWorkers, c.Prefetch, c.OverlapEval = memory.Size(tc.budget), tc.workers, 2*tc.workers, tc.overlap
		if tc.overlap {
			c.EvalCut = 0.3 // evaluation overlaps even where its chunks cut edges
		}
		res, plan, evs := runPlanned(t, c, ds, split)
		if res.OOMCount != 0 || res.Cache == nil || res.Cache.Hits == 0 || res.Cache.Bytes != matrix {
			t.Fatalf("run %d: %d OOMs, cache %+v", i, res.OOMCount, res.Cache)
		}
		if tc.guarding != (res.GuardActions > 0) || !strings.Contains(strings.Join(plan, "\n"), tc.planned) {
			t.Errorf("run %d: %d guard actions, plan %q", i, res.GuardActions, plan)
		}
		held := res.ParamBytes + res.Cache.Bytes
		mems := eventsOf(evs, profile.TypeMem, "")
		if len(mems) == 0 || res.PeakBytes > tc.budget {
			t.Fatalf("run %d: %d mem events, device peak %d (budget %d)", i, len(mems), res.PeakBytes, tc.budget)
		}
		for _, e := range mems {
			if e.Peak > tc.budget || e.Live > tc.budget || e.Peak <= held {
				t.Fatalf("run %d: %s batch %d/%d peak %d live %d: want within the budget %d and above the model and cache (%d)",
					i, e.Phase, e.Epoch, e.Batch, e.Peak, e.Live, tc.budget, held)
			}
		}
	}
}

// TestCacheLargerThanBudget: a cache the budget cannot hold beside the
// model is refused with an error that says so, before anything trains.
func TestCacheLargerThanBudget(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 1)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := memConfig(nn.KindSAGE)
	params, err := modelSpec(cfg, ds).ParamBytes()
	if err != nil {
		t.Fatal(err)
	}
	matrix := int64(len(ds.X)) * 4
	cfg.MemBudget, cfg.CacheBytes = memory.Size(params+matrix/2), "100%"
	for _, guard := range []GuardMode{"", GuardSplit} {
		cfg.MemGuard = guard
		dev := cpu.New(1, 0)
		_, err := Run(context.Background(), cfg, ds, split, dev, Options{})
		if err == nil || !strings.Contains(err.Error(), "feature cache of 100% (600 rows") || !strings.Contains(err.Error(), "does not fit the memory budget") {
			t.Errorf("guard %q: error %v, want the cache refused", guard, err)
		}
		if live := dev.Mem().Stats().Live; live != 0 {
			t.Errorf("guard %q: %d bytes live after the refusal", guard, live)
		}
	}
	for _, bad := range []struct {
		sampler Sampler
		size    string
		pol     featcache.Policy
		want    string
	}{
		{SamplerFull, "10%", "", "needs --sampler neighbor or gas"},
		{SamplerGAS, "10%", featcache.PolicyFrequency, "it needs --sampler neighbor"},
		{SamplerNeighbor, "1X", "", `cache size "1X"`},
		{SamplerNeighbor, "1MiB", "hot", `cache policy "hot"`},
	} {
		c := Defaults("sage")
		c.Sampler, c.Parts, c.CacheBytes, c.CachePolicy = bad.sampler, 4, bad.size, bad.pol
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want %q", bad, err, bad.want)
		}
	}
}
