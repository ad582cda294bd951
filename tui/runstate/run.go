package runstate

import (
	"encoding/json"
	"math"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
)

// spanBlock is the number of spans per entry of Spans' end index.
const spanBlock = 256

// Spans are a run's span events as parallel arrays, in journal order.
// Stage and Lane are ids in the Run's Stages and Lanes.
type Spans struct {
	Start []int64 // ns from the run's start
	Dur   []int64 // ns, never negative
	Stage []uint16
	Lane  []uint16
	Epoch []int32
	Batch []int32

	// blockEnd[k] is the largest end of spans [0, (k+1)*spanBlock): a
	// prefix maximum, so a window query skips every block that ended
	// before the window even when lanes record out of order.
	blockEnd []int64
	maxEnd   int64
	minStart int64
	// attrs holds the attributes of the few spans that carry any, by
	// index: most spans have none, so they cost nothing.
	attrs map[int]json.RawMessage
	bins  Bins
}

// Bins returns the spans' time per lane, stage and bin of time.
func (s *Spans) Bins() *Bins { return &s.bins }

// Len returns the number of spans.
func (s *Spans) Len() int { return len(s.Start) }

func (s *Spans) add(start, dur int64, stage, lane uint16, epoch, batch int) {
	dur = max(dur, 0)
	s.Start = append(s.Start, start)
	s.Dur = append(s.Dur, dur)
	s.Stage = append(s.Stage, stage)
	s.Lane = append(s.Lane, lane)
	s.Epoch = append(s.Epoch, clamp32(epoch))
	s.Batch = append(s.Batch, clamp32(batch))
	end := start + dur
	if len(s.Start) == 1 || end > s.maxEnd {
		s.maxEnd = end
	}
	if len(s.Start) == 1 || start < s.minStart {
		s.minStart = start
	}
	s.bins.add(start, dur, stage, lane)
	k := (len(s.Start) - 1) / spanBlock
	if k == len(s.blockEnd) {
		s.blockEnd = append(s.blockEnd, s.maxEnd)
	} else {
		s.blockEnd[k] = s.maxEnd
	}
}

// From returns an index i such that every span before i ends at or before
// t; spans from i on may or may not end after t (callers check each). It
// is a binary search over blocks of spans, so scanning a recent window
// costs the window, not the run.
func (s *Spans) From(t int64) int {
	lo, hi := 0, len(s.blockEnd)
	for lo < hi {
		m := (lo + hi) / 2
		if s.blockEnd[m] > t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return min(lo*spanBlock, len(s.Start))
}

// Attrs returns span i's attributes, a JSON object (nil if it has none).
func (s *Spans) Attrs(i int) json.RawMessage { return s.attrs[i] }

func (s *Spans) setAttrs(attrs json.RawMessage) {
	if len(attrs) == 0 || string(attrs) == "{}" || string(attrs) == "null" {
		return
	}
	if s.attrs == nil {
		s.attrs = map[int]json.RawMessage{}
	}
	s.attrs[s.Len()-1] = attrs
}

// MaxEnd returns the latest end of any span (0 without spans).
func (s *Spans) MaxEnd() int64 { return s.maxEnd }

// MinStart returns the earliest start of any span (0 without spans).
func (s *Spans) MinStart() int64 { return s.minStart }

// Mem are a run's mem events (one per batch and phase) as parallel arrays.
type Mem struct {
	T         []int64 // the event's time on the run's clock (sessions.EventTime)
	Epoch     []int32
	Batch     []int32
	Eval      []bool // phase "eval"
	Peak      []int64
	Budget    []int64 // 0: none
	Predicted []int64 // 0: none
	MaxPeak   int64   // largest peak
	MaxBudget int64   // largest budget
	// Changes counts the mem events digested, folded ones included: a
	// view keyed on it redraws when a point's figures change too.
	Changes uint64
}

// Len returns the number of memory points.
func (m *Mem) Len() int { return len(m.Peak) }

// fold merges mem event e into a point of the same batch and phase among
// the last n points (another rank's), keeping the largest figures; it
// reports whether there was one.
func (m *Mem) fold(e *profile.Event, n int) bool {
	ep, b, eval := clamp32(e.Epoch), clamp32(e.Batch), e.Phase == profile.PhaseEval
	for i := m.Len() - 1; i >= 0 && i >= m.Len()-n; i-- {
		if m.Epoch[i] == ep && m.Batch[i] == b && m.Eval[i] == eval {
			m.Peak[i] = max(m.Peak[i], e.Peak)
			m.Budget[i] = max(m.Budget[i], e.Budget)
			m.Predicted[i] = max(m.Predicted[i], e.Predicted)
			m.MaxPeak = max(m.MaxPeak, e.Peak)
			m.MaxBudget = max(m.MaxBudget, e.Budget)
			return true
		}
	}
	return false
}

// OOM is one oom event.
type OOM struct {
	T         int64 // time on the run's clock
	Epoch     int
	Batch     int
	Requested int64
	Live      int64
	Budget    int64
	Action    string
	// MemIndex is the number of memory points recorded before it: the
	// OOM sits between points MemIndex-1 and MemIndex.
	MemIndex int
}

// Guard is one guard event: a batch the memory guard split, cut or
// re-drew so that nothing failed (an older journal's oom event with a
// guard action counts too; its requested bytes are the prediction).
type Guard struct {
	T         int64 // time on the run's clock
	Epoch     int
	Batch     int
	Predicted int64 // the batch's predicted peak as drawn
	Actual    int64 // the largest peak measured for what trained in its place (0: unknown)
	Budget    int64
	Action    string
	// MemIndex is the number of memory points recorded before it.
	MemIndex int
}

// Layer is the staleness of one layer's histories, accumulated over its
// stale events, and the last history error measured at a refresh.
type Layer struct {
	Events   int64
	Hist     []int64 // summed counts per age bucket: 0, 1, 2-3, 4-7, ...
	MeanSum  float64 // sum of the events' means (finite ones)
	MeanN    int64
	Max      float64 // largest max
	LastMean float64
	RelErr   float64 // last hist_err rel_err; NaN if none
	// Mean and max age of each stale event in journal order (NaN where
	// the event's figure is not finite): the staleness over batches.
	Epochs, Batches []int32
	Means, Maxes    []float64
}

// Mean returns the mean of the events' mean ages (0 without events).
func (l *Layer) Mean() float64 {
	if l.MeanN == 0 {
		return 0
	}
	return l.MeanSum / float64(l.MeanN)
}

// Series is one metric's values in journal order.
type Series struct {
	Name  string
	Epoch []int32
	Batch []int32 // -1 for epoch-level values
	Value []float64
	T     []int64 // time on the run's clock
	// Changes counts the values digested, folded ones (a distributed
	// run's ranks) included: views redraw when it moves.
	Changes uint64

	ranks []int32 // a distributed run's: how many ranks each value averages
}

// Len returns the number of values.
func (s *Series) Len() int { return len(s.Value) }

// fold averages value v of (epoch, batch) into a value of the same epoch
// and batch among the last n (another rank's); it reports whether there
// was one.
func (s *Series) fold(epoch, batch int32, v float64, n int) bool {
	for i := s.Len() - 1; i >= 0 && i >= s.Len()-n; i-- {
		if s.Epoch[i] == epoch && s.Batch[i] == batch && i < len(s.ranks) {
			k := float64(s.ranks[i])
			s.Value[i] = (s.Value[i]*k + v) / (k + 1)
			s.ranks[i]++
			return true
		}
	}
	return false
}

// Last returns the last value (NaN if none).
func (s *Series) Last() float64 {
	if len(s.Value) == 0 {
		return math.NaN()
	}
	return s.Value[len(s.Value)-1]
}

// Run is the digest of one run's events. Feed it every event in journal
// order with Add. It is not safe for concurrent use (see Set).
type Run struct {
	// Name is the run's name in its session (the journal's name).
	Name string

	// From run_start.
	Started bool
	Variant string
	Session string
	Wall    string
	Host    *profile.Host
	Config  json.RawMessage
	// Epochs is the configured number of epochs (config's "epochs"; 0 if
	// it does not say).
	Epochs int
	// Budget is the configured memory budget in bytes (config's
	// "mem_budget"; 0 if it sets none): known before any mem event.
	Budget int64
	// World is the number of ranks of a distributed run (0 or 1: one
	// process). Its ranks' mem events of one batch make one memory point,
	// the largest, and their metric values of one batch one value, the
	// mean.
	World int
	// RankStarts is what a distributed run's ranks' run_starts say of
	// them, Nodes its ranks grouped by node (SetRankStarts); kept across
	// a replay's restart.
	RankStarts []sessions.RankStart
	Nodes      []NodeGroup
	// Adjusted is what the launcher changed in the run's config to fit
	// the user's constraints (run_start's adjusted).
	Adjusted []string

	// From run_end.
	Ended      bool
	Status     profile.Status
	Error      string
	EndSummary json.RawMessage

	// Err is what stopped the feed other than run_end (a writer that died,
	// a truncated journal), set by the Set.
	Err error

	// Stored is the run's status as the session store tells it
	// (sessions.RunState: crashed for a run whose writer died without
	// run_end, as the session list says), StoredError its error; set
	// with Set.SetStored, kept across a replay's restart. Drained is set
	// once a replay has delivered every event of the run: a run without
	// run_end then has the stored status.
	Stored      profile.Status
	StoredError string
	Drained     bool

	Stages Names // span names
	Lanes  Names // span lanes
	Spans  Spans
	Mem    Mem
	OOMs   []OOM   // failed allocations
	Guards []Guard // the memory guard's actions (not OOMs)
	Layers []Layer // staleness per layer index
	// FeatCache is the feature cache's outcome per batch (cache events).
	FeatCache FeatCache
	// Metrics in order of first appearance; Metric finds one by name.
	Metrics []*Series
	metric  map[string]*Series

	// GPU is the last gpu sample (zero if none); GPUs all of them,
	// bounded (MaxGPUSamples).
	GPU  profile.Event
	GPUs GPUSeries
	// GPUWork is the GPU's own breakdown (kernels and copies per step).
	GPUWork GPUWork

	// Now is the time of the latest event on the run's clock
	// (sessions.EventTime): how far the run has got.
	Now int64
	// Events counts the events added.
	Events int64

	agg        *profile.Aggregator
	ans        answers // the analysis, fed as events come (Answers)
	version    uint64
	epochsDone map[int32]bool // epochs with an epoch-level loss metric
}

// NewRun returns an empty run named name.
func NewRun(name string) *Run {
	b := analysis.NewRunBuilder()
	b.CountStepsOnly() // the views draw the counts; the residuals are explain's
	return &Run{Name: name, agg: profile.NewAggregator(), ans: answers{b: b},
		metric: map[string]*Series{}, epochsDone: map[int32]bool{}}
}

// Version changes whenever an event is added; views cache what they drew
// from a run under its version.
func (r *Run) Version() uint64 { return r.version }

// addSpan digests a span: the spans' arrays and the GPU's breakdown.
func (r *Run) addSpan(e *profile.Event) {
	r.Spans.add(e.Start, e.Dur, r.Stages.ID(e.Name), r.Lanes.ID(e.Lane), e.Epoch, e.Batch)
	r.Spans.setAttrs(e.Attrs)
	r.GPUWork.add(e)
}

// Add digests one event: a method per event type.
func (r *Run) Add(e *profile.Event) {
	r.version++
	r.Events++
	r.Now = sessions.EventTime(e, r.Now)
	r.agg.Add(*e)
	r.ans.b.Add(e)
	switch e.T {
	case profile.TypeSpan:
		r.addSpan(e)
	case profile.TypeMem:
		r.addMem(e)
	case profile.TypeOOM, profile.TypeGuard:
		r.addOOM(e)
	case profile.TypeCache:
		n := 0
		if r.World > 1 {
			n = 2 * r.World
		}
		r.FeatCache.add(e, r.Now, n)
	case profile.TypeStale:
		r.addStale(e)
	case profile.TypeHistErr:
		if l := r.layer(e.Layer); l != nil {
			l.RelErr = e.RelErr
		}
	case profile.TypeMetric:
		r.addMetric(e)
	case profile.TypeGPU:
		r.GPU = *e
		r.GPUs.add(e, r.Now)
	case profile.TypeRunStart:
		r.addRunStart(e)
	case profile.TypeRunEnd:
		r.Ended = true
		r.Status, r.Error, r.EndSummary = e.Status, e.Error, e.Summary
		if r.Status == "" {
			r.Status = profile.StatusOK
		}
	}
}

// addMem digests a batch's memory figures; the ranks' figures of one
// batch of a distributed run fold into one point.
func (r *Run) addMem(e *profile.Event) {
	m := &r.Mem
	m.Changes++
	if r.World > 1 && m.fold(e, 2*r.World) {
		return
	}
	m.T = append(m.T, r.Now)
	m.Epoch = append(m.Epoch, clamp32(e.Epoch))
	m.Batch = append(m.Batch, clamp32(e.Batch))
	m.Eval = append(m.Eval, e.Phase == profile.PhaseEval)
	m.Peak = append(m.Peak, e.Peak)
	m.Budget = append(m.Budget, e.Budget)
	m.Predicted = append(m.Predicted, e.Predicted)
	m.MaxPeak = max(m.MaxPeak, e.Peak)
	m.MaxBudget = max(m.MaxBudget, e.Budget)
}

// addStale digests a batch's staleness of one layer's histories.
func (r *Run) addStale(e *profile.Event) {
	l := r.layer(e.Layer)
	if l == nil {
		return
	}
	l.Events++
	if len(l.Hist) < len(e.Hist) {
		l.Hist = append(l.Hist, make([]int64, len(e.Hist)-len(l.Hist))...)
	}
	for i, c := range e.Hist {
		l.Hist[i] += c
	}
	if finite(e.Mean) {
		l.MeanSum += e.Mean
		l.MeanN++
		l.LastMean = e.Mean
	}
	if finite(e.Max) {
		l.Max = max(l.Max, e.Max)
	}
	l.Epochs, l.Batches = append(l.Epochs, clamp32(e.Epoch)), append(l.Batches, clamp32(e.Batch))
	l.Means, l.Maxes = append(l.Means, orNaN(e.Mean)), append(l.Maxes, orNaN(e.Max))
}

// addMetric appends a metric to its series; an epoch-level loss marks
// its epoch done.
func (r *Run) addMetric(e *profile.Event) {
	s := r.metric[e.Name]
	if s == nil {
		s = &Series{Name: e.Name}
		r.metric[e.Name] = s
		r.Metrics = append(r.Metrics, s)
	}
	s.Changes++
	if r.World > 1 {
		// the ranks' values of one batch: their mean
		if s.fold(clamp32(e.Epoch), clamp32(e.Batch), e.Value, 2*r.World) {
			return
		}
		s.ranks = append(s.ranks, 1)
	}
	s.Epoch = append(s.Epoch, clamp32(e.Epoch))
	s.Batch = append(s.Batch, clamp32(e.Batch))
	s.Value = append(s.Value, e.Value)
	s.T = append(s.T, r.Now)
	if e.Name == "loss" && e.Batch < 0 {
		r.epochsDone[clamp32(e.Epoch)] = true
	}
}

// addRunStart takes the run's identity, host, config and plan.
func (r *Run) addRunStart(e *profile.Event) {
	r.Started = true
	r.Variant, r.Session, r.Wall, r.Host, r.Config = e.Variant, e.Session, e.Wall, e.Host, e.Config
	if e.Run != "" && r.Name == "" {
		r.Name = e.Run
	}
	r.Epochs, r.Budget = configEpochs(e.Config), configBudget(e.Config)
	r.World = e.World
	r.Adjusted = e.Adjusted
}

// addOOM digests an oom or guard event: a guard action (also an older
// journal's oom event with one, see profile.Event.Kind) is a Guard, never
// an OOM.
func (r *Run) addOOM(e *profile.Event) {
	if e.Kind() != profile.TypeGuard {
		r.OOMs = append(r.OOMs, OOM{T: r.Now, Epoch: e.Epoch, Batch: e.Batch, Requested: e.Requested,
			Live: e.Live, Budget: e.Budget, Action: e.Action, MemIndex: r.Mem.Len()})
		return
	}
	pred := e.Predicted
	if e.T == profile.TypeOOM {
		pred = e.Requested
	}
	r.Guards = append(r.Guards, Guard{T: r.Now, Epoch: e.Epoch, Batch: e.Batch, Predicted: pred, Actual: e.Actual,
		Budget: e.Budget, Action: e.Action, MemIndex: r.Mem.Len()})
}

// maxLayers bounds the layer index a stale or hist_err event may name.
const maxLayers = 256

func (r *Run) layer(i int) *Layer {
	if i < 0 || i >= maxLayers {
		return nil
	}
	for len(r.Layers) <= i {
		r.Layers = append(r.Layers, Layer{RelErr: math.NaN()})
	}
	return &r.Layers[i]
}

// Metric returns the series of a metric (nil if the run has none).
func (r *Run) Metric(name string) *Series { return r.metric[name] }

// Summary returns the run's aggregation so far (profile.Aggregator: the
// figures `gnnscope compare` prints for the same events).
func (r *Run) Summary() profile.Summary { return r.agg.Summary() }

// HasStale reports whether the run pulled historical embeddings (it has
// stale or hist_err events).
func (r *Run) HasStale() bool { return len(r.Layers) > 0 }

// HasCache reports whether the run recorded feature-cache outcomes.
func (r *Run) HasCache() bool { return r.FeatCache.Changes > 0 }

// EpochsDone returns how many epochs have finished: those with an
// epoch-level loss metric or, for a writer that records none, every epoch
// the spans show but the last one (all of them once the run has ended).
func (r *Run) EpochsDone(s *profile.Summary) int {
	n := len(s.Epochs)
	if !r.Ended && n > 0 {
		n--
	}
	return max(n, len(r.epochsDone))
}

// configEpochs reads "epochs" from a run_start config (0 if absent).
func configEpochs(cfg json.RawMessage) int {
	if len(cfg) == 0 {
		return 0
	}
	var c struct {
		Epochs int `json:"epochs"`
	}
	if json.Unmarshal(cfg, &c) != nil {
		return 0
	}
	return max(c.Epochs, 0)
}

// configBudget reads "mem_budget" from a run_start config: bytes, as a
// number or a size string such as "3MiB" (0 if absent or not a size).
func configBudget(cfg json.RawMessage) int64 {
	if len(cfg) == 0 {
		return 0
	}
	var c struct {
		Budget json.RawMessage `json:"mem_budget"`
	}
	if json.Unmarshal(cfg, &c) != nil || len(c.Budget) == 0 {
		return 0
	}
	var n float64
	if json.Unmarshal(c.Budget, &n) == nil {
		if n > 0 && n < math.MaxInt64 {
			return int64(n)
		}
		return 0
	}
	var str string
	if json.Unmarshal(c.Budget, &str) != nil {
		return 0
	}
	b, err := units.ParseSize(str)
	if err != nil || b < 0 {
		return 0
	}
	return b
}

func clamp32(v int) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32))
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// orNaN returns f if it is finite, else NaN.
func orNaN(f float64) float64 {
	if finite(f) {
		return f
	}
	return math.NaN()
}

// reset empties the run (a replay restarts), keeping its name and making
// its version new.
func (r *Run) reset() {
	v, st, se, rs, ns := r.version, r.Stored, r.StoredError, r.RankStarts, r.Nodes
	*r = *NewRun(r.Name)
	r.version, r.Stored, r.StoredError, r.RankStarts, r.Nodes = v+1, st, se, rs, ns
}
