package whatif

import (
	"encoding/json"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// Batch is one training batch of a run as recorded: its stage times in
// nanoseconds (sums over the batch's spans) and where it was prepared.
type Batch struct {
	Epoch, Index int
	// Sample and Transfer are the batch's sample and transfer spans;
	// Cache is the feature cache's part of Transfer (its cache span).
	Sample, Transfer, Cache int64
	// Train is the batch's train span on the trainer's lane; Forward,
	// Backward and Step its children's.
	Train                   int64
	Forward, Backward, Step int64
	// Wait is the time the trainer waited for the batch (wait span).
	Wait int64
	// Gap is the trainer's own time around the batch that no stage
	// span covers (taking the batch, metrics, memory accounting): the
	// trainer's time from the end of the previous batch (or of the
	// previous epoch's evaluation in turn) to the end of this batch's
	// training, less its spans on the trainer's lane.
	Gap int64
	// OnTrainer is set when the trainer prepared the batch itself (its
	// sample or transfer span is on the compute lane).
	OnTrainer bool

	trainStart, trainEnd int64
	prepStart, prepEnd   int64 // its sample and transfer spans (prepSet: any)
	prepSet              bool
}

// prepSpan widens the batch's preparation interval to a span.
func (b *Batch) prepSpan(start, dur int64) {
	if !b.prepSet || start < b.prepStart {
		b.prepStart = start
	}
	b.prepEnd = max(b.prepEnd, start+dur)
	b.prepSet = true
}

// Prep returns the batch's preparation time: sampling and transfer.
func (b Batch) Prep() int64 { return b.Sample + b.Transfer }

// EpochRec is one epoch's evaluation as recorded.
type EpochRec struct {
	Epoch int
	// Eval is the epoch's evaluation time (its eval spans; 0: not
	// evaluated); Overlapped is set when it ran on the eval lane beside
	// the next epoch.
	Eval       int64
	Overlapped bool

	evalStart, evalEnd int64
}

// Trace is what the model needs of one run: its batches and epochs in
// order, its schedule and its host.
type Trace struct {
	Run, Variant string
	Status       profile.Status
	// Repeat is the run's repeat number in its session (NAME.rK), which
	// pairs it with the other variants' runs of the same K; the caller
	// sets it (0: unknown).
	Repeat int
	// Cores is the host's logical CPUs (run_start's host cpus, else
	// cores; 1 if absent); Procs the threads the Go runtime ran at once
	// (run_end's usage threads, else Cores); KernelThreads the threads a
	// kernel uses (the config's threads, 0 meaning Procs).
	Cores, Procs, KernelThreads int
	// Workers and Prefetch are the run's sampler workers and prefetch
	// depth (0: prepared on the trainer); OverlapEval its overlapped
	// evaluation.
	Workers, Prefetch int
	OverlapEval       bool
	// HitRate is the share of input rows the feature cache held (0
	// without cache events); HasCache is set when the run had cache
	// events.
	HitRate  float64
	HasCache bool
	// HostMemory is set when the run's device memory is the host's (the
	// CPU device): a row found in the feature cache is copied at the same
	// cost as one gathered from the host.
	HostMemory bool
	// Config is run_start's config, as recorded.
	Config json.RawMessage
	// Usage is what the run's process got from the host (nil where the
	// journal has none).
	Usage *profile.Usage
	// SetupNs is the run's setup spans, outside every epoch.
	SetupNs int64

	Batches []Batch
	Epochs  []EpochRec
	// Measured are the run's epoch wall times in seconds, as the
	// comparisons compute them (profile.Summary's epochs).
	Measured []float64
}

// MeasuredMedian returns the median of the run's measured epoch times in
// seconds (0 without any).
func (t *Trace) MeasuredMedian() float64 { return median(t.Measured) }

type batchKey struct{ epoch, index int }

// runConfig is what the model reads of run_start's config (the engine's
// config keys; absent keys stay zero).
type runConfig struct {
	Threads        int    `json:"threads"`
	SamplerWorkers int    `json:"sampler_workers"`
	Prefetch       int    `json:"prefetch"`
	OverlapEval    bool   `json:"overlap_eval"`
	CacheBytes     string `json:"cache_bytes"`
	Device         string `json:"device"`
}

// Builder collects a Trace from a run's events in journal order.
type Builder struct {
	agg      *profile.Aggregator
	t        Trace
	host     *profile.Host
	batches  map[batchKey]*Batch
	epochs   map[int]*EpochRec
	hits     int64
	misses   int64
	first    int64 // start of the first span other than setup
	hasFirst bool
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{agg: profile.NewAggregator(), batches: map[batchKey]*Batch{}, epochs: map[int]*EpochRec{}}
}

// Add takes one event of the run. Spans of other ranks than the first of
// a distributed run are left out: the model replays one trainer.
func (b *Builder) Add(e *profile.Event) {
	switch e.T {
	case profile.TypeRunStart:
		b.runStart(e)
	case profile.TypeRunEnd:
		b.t.Status, b.t.Usage = e.Status, e.Usage
	case profile.TypeCache:
		b.hits += e.Hits
		b.misses += e.Misses
	case profile.TypeSpan:
		if r, lane, ok := profile.SplitRankLane(e.Lane); ok {
			if r != 0 {
				return
			}
			c := *e
			c.Lane = lane
			e = &c
		}
		b.span(e)
	}
	b.agg.Add(*e)
}

func (b *Builder) runStart(e *profile.Event) {
	b.t.Run, b.t.Variant, b.host, b.t.Config = e.Run, e.Variant, e.Host, e.Config
	var cfg runConfig
	if len(e.Config) > 0 && json.Unmarshal(e.Config, &cfg) == nil {
		b.t.KernelThreads, b.t.Workers, b.t.Prefetch, b.t.OverlapEval = cfg.Threads, cfg.SamplerWorkers, cfg.Prefetch, cfg.OverlapEval
		b.t.HostMemory = cfg.Device == "" || cfg.Device == "cpu"
	}
}

func (b *Builder) batch(e *profile.Event) *Batch {
	k := batchKey{e.Epoch, e.Batch}
	p := b.batches[k]
	if p == nil {
		p = &Batch{Epoch: e.Epoch, Index: e.Batch}
		b.batches[k] = p
	}
	return p
}

// child adds a train span's child (forward, backward, step) to its batch.
func (b *Builder) child(e *profile.Event) {
	p := b.batch(e)
	switch e.Name {
	case profile.StageForward:
		p.Forward += e.Dur
	case profile.StageBackward:
		p.Backward += e.Dur
	default:
		p.Step += e.Dur
	}
}

func (b *Builder) span(e *profile.Event) {
	if e.Name == profile.StageSetup {
		b.t.SetupNs += e.Dur
		return
	}
	if !b.hasFirst || e.Start < b.first {
		b.first, b.hasFirst = e.Start, true
	}
	onTrainer := e.Lane == profile.LaneCompute
	switch e.Name {
	case profile.StageSample:
		p := b.batch(e)
		p.Sample += e.Dur
		p.OnTrainer = p.OnTrainer || onTrainer
		p.prepSpan(e.Start, e.Dur)
	case profile.StageTransfer:
		p := b.batch(e)
		p.Transfer += e.Dur
		p.OnTrainer = p.OnTrainer || onTrainer
		p.prepSpan(e.Start, e.Dur)
	case profile.StageCache:
		b.batch(e).Cache += e.Dur
	case profile.StageForward, profile.StageBackward, profile.StageStep:
		if onTrainer {
			b.child(e)
		}
	case profile.StageWait:
		if onTrainer {
			b.batch(e).Wait += e.Dur
		}
	case profile.StageTrain:
		if !onTrainer {
			return
		}
		p := b.batch(e)
		if p.Train == 0 || e.Start < p.trainStart {
			p.trainStart = e.Start
		}
		p.Train += e.Dur
		p.trainEnd = max(p.trainEnd, e.Start+e.Dur)
	case profile.StageEval:
		ep := b.epochs[e.Epoch]
		if ep == nil {
			ep = &EpochRec{Epoch: e.Epoch, evalStart: e.Start}
			b.epochs[e.Epoch] = ep
		}
		ep.Eval += e.Dur
		ep.Overlapped = ep.Overlapped || !onTrainer
		ep.evalStart = min(ep.evalStart, e.Start)
		ep.evalEnd = max(ep.evalEnd, e.Start+e.Dur)
	}
}

// Trace returns the run's trace as added so far. The builder may take
// more events afterwards.
func (b *Builder) Trace() *Trace {
	t := b.t
	t.Cores = 1
	if h := b.host; h != nil {
		switch {
		case h.CPUs > 0:
			t.Cores = h.CPUs
		case h.Cores > 0:
			t.Cores = h.Cores
		}
	}
	t.Procs = t.Cores
	if t.Usage != nil && t.Usage.Threads > 0 {
		t.Procs = t.Usage.Threads
	}
	if t.KernelThreads <= 0 || t.KernelThreads > t.Procs {
		t.KernelThreads = t.Procs
	}
	if n := b.hits + b.misses; n > 0 {
		t.HasCache, t.HitRate = true, float64(b.hits)/float64(n)
	}
	t.Batches, t.Epochs = b.ordered()
	for _, ep := range b.agg.Summary().Epochs {
		t.Measured = append(t.Measured, ep.WallS)
	}
	return &t
}

// ordered returns the trained batches and the epochs in order, the
// batches' trainer gaps filled in.
func (b *Builder) ordered() ([]Batch, []EpochRec) {
	var batches []Batch
	for _, p := range b.batches {
		if p.Train > 0 {
			batches = append(batches, *p)
		}
	}
	slices.SortFunc(batches, func(x, y Batch) int {
		if x.Epoch != y.Epoch {
			return x.Epoch - y.Epoch
		}
		return x.Index - y.Index
	})
	seen := map[int]bool{}
	var epochs []EpochRec
	for _, p := range batches {
		if !seen[p.Epoch] {
			seen[p.Epoch] = true
			ep := EpochRec{Epoch: p.Epoch}
			if e := b.epochs[p.Epoch]; e != nil {
				ep = *e
			}
			epochs = append(epochs, ep)
		}
	}
	fillGaps(batches, b.epochs, b.first)
	return batches, epochs
}

// fillGaps sets each batch's Gap: the trainer's time since the previous
// batch ended (or since the previous epoch's evaluation in turn ended, or
// since the first span) up to the end of its training, less the spans the
// trainer spent on the batch.
func fillGaps(batches []Batch, epochs map[int]*EpochRec, first int64) {
	prev := first
	for i := range batches {
		p := &batches[i]
		if i > 0 && batches[i-1].Epoch != p.Epoch {
			if ep := epochs[batches[i-1].Epoch]; ep != nil && !ep.Overlapped {
				prev = max(prev, ep.evalEnd)
			}
		}
		spent := p.Train + p.Wait
		if p.OnTrainer {
			spent += p.Prep()
		}
		p.Gap = max(0, p.trainEnd-prev-spent)
		prev = max(prev, p.trainEnd)
	}
}
