package synth

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// Options shape a synthetic run.
type Options struct {
	Run     string // run and variant name
	Epochs  int
	Batches int // per epoch
	// Samplers > 0 makes a pipelined run with that many sampler lanes
	// and an overlapped evaluator; 0 a baseline run.
	Samplers int
	Layers   int   // > 0: a stale event per batch and layer
	Budget   int64 // memory budget in bytes (0: 1 GiB)
	OOMEvery int   // > 0: an oom event (action skip) every OOMEvery batches
	// GuardEvery > 0: the memory guard splits every GuardEvery-th batch
	// (a guard event, predicted over the budget, actual under it; never
	// an oom event).
	GuardEvery int
	// EvalChunks > 0: each epoch's evaluation records that many eval
	// mem events (inference chunks).
	EvalChunks int
	// GPUEvery > 0: a gpu sample (utilization, device memory) every
	// GPUEvery batches.
	GPUEvery int
	// Cache gives the run a feature cache: a cache span on the loader's
	// lane and a cache event per batch, its hit rate warming from about
	// 0.45 to about 0.75 over the first hundred batches.
	Cache bool
	// Status and Error are run_end's (default: ok, no error).
	Status profile.Status
	Error  string
	Seed   uint64
	// Cut stops the run after this many batches in all, without run_end
	// (0: the whole run, ended by run_end).
	Cut int
}

// Count returns the number of events Generate produces for o.
func Count(o Options) int {
	n := 0
	Generate(o, func(*profile.Event) { n++ })
	return n
}

// Generate calls fn with each event of the run, in journal order. The
// event passed is reused: copy what must be kept.
func Generate(o Options, fn func(e *profile.Event)) {
	if o.Budget <= 0 {
		o.Budget = 1 << 30
	}
	g := &generator{
		o:           o,
		fn:          fn,
		rng:         rand.New(rand.NewPCG(o.Seed, 0x5eed)),
		pending:     make([]profile.Event, 0, 32),
		now:         int64(5 * time.Millisecond),
		samplerFree: make([]int64, max(o.Samplers, 1)),
		loss:        2.0,
	}
	g.start()
	for ep := 1; ep <= o.Epochs; ep++ {
		for b := 0; b < o.Batches; b++ {
			if o.Cut > 0 && g.total >= o.Cut {
				g.now = math.MaxInt64
				g.flush()
				return
			}
			g.total++
			g.load(ep, b)
			g.train(ep, b)
			g.afterBatch(ep, b)
		}
		g.endEpoch(ep)
	}
	g.now = math.MaxInt64
	g.flush()
	status := o.Status
	if status == "" {
		status = profile.StatusOK
	}
	g.emit(profile.Event{T: profile.TypeRunEnd, Status: status, Error: o.Error})
}

// generator is the state of one Generate call.
type generator struct {
	o           Options
	fn          func(e *profile.Event)
	rng         *rand.Rand
	e           profile.Event   // the event emit passes, reused
	pending     []profile.Event // spans to write at the next flush
	deferred    []profile.Event // spans that end later than the batch being written
	now         int64           // the compute lane's clock, ns from run start
	samplerFree []int64         // when each sampler lane is next free
	total       int             // batches begun
	loss        float64
}

// jit returns d ± 20 %.
func (g *generator) jit(d time.Duration) int64 {
	return int64(float64(d) * (0.8 + 0.4*g.rng.Float64()))
}

// emit passes ev to fn at once.
func (g *generator) emit(ev profile.Event) { g.e = ev; g.fn(&g.e) }

// span queues a span for the next flush.
func (g *generator) span(name, lane string, ep, b int, start, dur int64) {
	g.pending = append(g.pending, profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: ep, Batch: b, Start: start, Dur: dur})
}

// flush passes the queued spans and the deferred ones that end by now to
// fn, in order of their ends.
func (g *generator) flush() {
	kept := g.deferred[:0]
	for _, d := range g.deferred {
		if endOf(&d) <= g.now {
			g.pending = append(g.pending, d)
		} else {
			kept = append(kept, d)
		}
	}
	g.deferred = kept
	slices.SortStableFunc(g.pending, func(a, b profile.Event) int {
		return int(min(max(endOf(&a)-endOf(&b), -1), 1))
	})
	for i := range g.pending {
		g.fn(&g.pending[i])
	}
	g.pending = g.pending[:0]
}

// start writes run_start and the setup span.
func (g *generator) start() {
	o := g.o
	c := map[string]any{"epochs": o.Epochs, "sampler_workers": o.Samplers, "batch_size": 1024}
	if o.Cache {
		c["cache_bytes"], c["cache_policy"] = "20%", "degree"
	}
	cfg, _ := json.Marshal(c)
	g.emit(profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: o.Run, Variant: o.Run,
		Session: "synthetic", Config: cfg, Host: &profile.Host{Cores: 8}, Wall: "2026-01-02T03:04:05.000000000Z"})
	g.span(profile.StageSetup, profile.LaneCompute, 0, -1, 0, g.now)
	g.flush()
}

// load queues batch b's sampling and transfer: on the compute lane in a
// baseline run; on a sampler lane, prefetched, in a pipelined one, where
// compute waits for it if it is late.
func (g *generator) load(ep, b int) {
	if g.o.Samplers == 0 {
		d := g.jit(2 * time.Millisecond)
		g.span(profile.StageSample, profile.LaneCompute, ep, b, g.now, d)
		g.now += d
		if g.o.Cache {
			d = g.jit(300 * time.Microsecond)
			g.span(profile.StageCache, profile.LaneCompute, ep, b, g.now, d)
			g.now += d
		}
		d = g.jit(time.Millisecond)
		g.span(profile.StageTransfer, profile.LaneCompute, ep, b, g.now, d)
		g.now += d
		return
	}
	w := b % g.o.Samplers
	s := max(g.samplerFree[w], g.now-int64(8*time.Millisecond)) // a bounded prefetch
	ds, dt := g.jit(2*time.Millisecond), g.jit(time.Millisecond)
	g.span(profile.StageSample, profile.SamplerLane(w), ep, b, s, ds)
	if g.o.Cache {
		dc := g.jit(300 * time.Microsecond)
		g.span(profile.StageCache, profile.SamplerLane(w), ep, b, s+ds, dc)
		ds += dc
	}
	g.span(profile.StageTransfer, profile.SamplerLane(w), ep, b, s+ds, dt)
	ready := s + ds + dt
	g.samplerFree[w] = ready
	if ready > g.now {
		g.span(profile.StageWait, profile.LaneCompute, ep, b, g.now, ready-g.now)
		g.now = ready
	}
}

// train writes batch b's forward, backward and step spans inside its train
// span.
func (g *generator) train(ep, b int) {
	start := g.now
	for _, st := range []struct {
		name string
		d    time.Duration
	}{{profile.StageForward, 2 * time.Millisecond}, {profile.StageBackward, 2500 * time.Microsecond}, {profile.StageStep, 500 * time.Microsecond}} {
		d := g.jit(st.d)
		g.span(st.name, profile.LaneCompute, ep, b, g.now, d)
		g.now += d
	}
	g.span(profile.StageTrain, profile.LaneCompute, ep, b, start, g.now-start)
	g.flush()
}

// afterBatch writes batch b's memory event, an oom or guard event when
// one is due, its loss and a stale event per layer.
func (g *generator) afterBatch(ep, b int) {
	o := g.o
	peak := int64(float64(o.Budget) * (0.55 + 0.3*g.rng.Float64()))
	g.emit(profile.Event{T: profile.TypeMem, Epoch: ep, Batch: b, Phase: profile.PhaseTrain, Peak: peak, Live: peak / 3, Budget: o.Budget, Predicted: peak + peak/20})
	if o.OOMEvery > 0 && g.total%o.OOMEvery == 0 {
		g.emit(profile.Event{T: profile.TypeOOM, Epoch: ep, Batch: b, Requested: o.Budget / 4, Live: o.Budget, Budget: o.Budget, Action: profile.ActionSkip})
	}
	if o.GuardEvery > 0 && g.total%o.GuardEvery == 0 {
		g.emit(profile.Event{T: profile.TypeGuard, Epoch: ep, Batch: b, Predicted: o.Budget + o.Budget/4, Actual: peak, Budget: o.Budget, Action: profile.ActionSplit})
	}
	if o.GPUEvery > 0 && g.total%o.GPUEvery == 0 {
		util := 0.35 + 0.6*math.Abs(math.Sin(float64(g.total)/40))
		g.emit(profile.Event{T: profile.TypeGPU, Ts: g.now, Used: peak + o.Budget/8, Total: 2 * o.Budget, Util: util})
	}
	if o.Cache {
		g.cacheEvent(ep, b)
	}
	g.loss = g.loss*0.9995 + 0.0002
	g.emit(profile.Event{T: profile.TypeMetric, Name: "batch_loss", Epoch: ep, Batch: b, Value: g.loss * (0.9 + 0.2*g.rng.Float64())})
	for l := 0; l < o.Layers; l++ {
		h := []int64{int64(g.rng.IntN(100)), int64(g.rng.IntN(300)), int64(g.rng.IntN(200)), int64(g.rng.IntN(50))}
		g.emit(profile.Event{T: profile.TypeStale, Epoch: ep, Batch: b, Layer: l + 1, Mean: 1 + g.rng.Float64(), Max: 7, Hist: h})
	}
}

// endEpoch writes epoch ep's evaluation span (on the compute lane in a
// baseline run, overlapped on the eval lane in a pipelined one), its
// chunks' mem events, its metrics and a history-error event per layer.
func (g *generator) endEpoch(ep int) {
	o := g.o
	lane := profile.LaneCompute
	evalStart := g.now
	if o.Samplers > 0 {
		lane = profile.LaneEval
	}
	d := g.jit(time.Duration(o.Batches) * time.Millisecond)
	if o.Samplers == 0 {
		g.span(profile.StageEval, lane, ep, -1, evalStart, d)
		g.now += d
	} else {
		g.deferred = append(g.deferred, profile.Event{T: profile.TypeSpan, Name: profile.StageEval, Lane: lane, Epoch: ep, Batch: -1, Start: evalStart, Dur: d})
	}
	g.flush()
	for c := 0; c < o.EvalChunks; c++ {
		peak := int64(float64(o.Budget) * (0.3 + 0.1*g.rng.Float64()))
		g.emit(profile.Event{T: profile.TypeMem, Epoch: ep, Batch: c, Phase: profile.PhaseEval, Peak: peak, Live: peak / 2, Budget: o.Budget, Predicted: peak + peak/10})
	}
	acc := 1 - 0.5*math.Exp(-float64(ep)/3)
	g.emit(profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: ep, Batch: -1, Value: g.loss})
	g.emit(profile.Event{T: profile.TypeMetric, Name: "train_acc", Epoch: ep, Batch: -1, Value: acc})
	g.emit(profile.Event{T: profile.TypeMetric, Name: "val_acc", Epoch: ep, Batch: -1, Value: acc - 0.05})
	g.emit(profile.Event{T: profile.TypeMetric, Name: "test_acc", Epoch: ep, Batch: -1, Value: acc - 0.06})
	for l := 0; l < o.Layers; l++ {
		g.emit(profile.Event{T: profile.TypeHistErr, Epoch: ep, Layer: l + 1, RelErr: 0.3 / float64(ep)})
	}
}

// cacheEvent writes batch b's cache event: 4096 input rows of 512 bytes,
// the share found in the cache warming up, with noise.
func (g *generator) cacheEvent(ep, b int) {
	const rows, rowBytes = 4096, 512
	rate := 0.45 + 0.3*(1-math.Exp(-float64(g.total)/40)) + 0.1*(g.rng.Float64()-0.5)
	hits := int64(rate * rows)
	g.emit(profile.Event{T: profile.TypeCache, Epoch: ep, Batch: b, Hits: hits, Misses: rows - hits, BytesH2D: (rows - hits) * rowBytes})
}

func endOf(e *profile.Event) int64 { return e.Start + e.Dur }
