package profile

import (
	"encoding/json"
	"math"
	"slices"
)

// TopLevel reports whether a stage name is one of the top-level pipeline
// stages counted in T_stages: sample, transfer, train and eval. Children of
// train (forward, backward, step) and the auxiliary stages (history.pull,
// history.push, cache, guard), which run nested inside the top-level ones,
// are not counted, so no time is counted twice.
func TopLevel(name string) bool {
	switch name {
	case StageSample, StageTransfer, StageTrain, StageEval:
		return true
	}
	return false
}

// Summary is the aggregation of one run's events. Times are in seconds.
//
// Definitions (all over span events; a span covers [start, start+dur)):
//
//   - wall time = max(start+dur) − min(start) over all spans.
//   - data wait = total duration of `wait` spans, plus `sample` and
//     `transfer` spans that ran on lane `compute` (the baseline prepares data
//     on the trainer itself, so that time is waiting for data too).
//   - T_stages = total duration of top-level stage spans (sample, transfer,
//     train, eval) on all lanes.
//   - overlap = T_stages / wall time (1.0 = strictly sequential, higher =
//     stages ran concurrently).
//   - T_serial = max(T_train, T_eval), where T_train is the total of `train`
//     spans and T_eval the total of `eval` spans: optimizer steps must run
//     one after the other, and so must the evaluations of one run, while
//     sampling, transfer and evaluation can all overlap training.
//   - ideal = max(T_serial, T_stages / C), C = the cores of run_start's host
//     (1 if absent): the shortest wall time the same work could take with
//     perfect overlap on the cores available.
//   - efficiency = ideal / wall time, at most 1 (0 without spans).
//   - epoch e ends when both its last `train` span on lane `compute` and
//     its `eval` spans (if any) have ended; epoch e's wall time is the end
//     of epoch e minus the end of epoch e−1 (for the first epoch listed,
//     minus the start of the first span other than `setup`: one-time setup
//     before the first epoch counts in the wall time, not in an epoch). This is the time each epoch adds
//     to the run, whatever the schedule: with prefetching, epoch e+1's
//     batches are sampled during epoch e; with overlapped evaluation, epoch
//     e's evaluation runs during epoch e+1. Epochs without a train span are
//     not listed.
//   - epoch spread: min, median, max, mean and the sample standard deviation
//     (n−1) of the epoch wall times.
//   - a distributed run (lanes "rank<R>/<lane>", see RankLane): epoch
//     times are computed per rank as above, on that rank's lanes and from
//     its own first span; epoch e's wall time is the slowest rank's, the
//     largest of the ranks' times for e, and its batches those of every
//     rank. A rank's training time is the sum of its epoch times; the
//     straggler ratio is the slowest rank's training time over the median
//     of the ranks' (the mean of the two middle ones for an even count).
type Summary struct {
	Status  Status `json:"status,omitempty"` // from run_end; empty while running
	Error   string `json:"error,omitempty"`  // from run_end
	Run     string `json:"run,omitempty"`    // from run_start
	Variant string `json:"variant,omitempty"`
	Cores   int    `json:"cores"` // C: from run_start's host, 1 if absent

	Events int64            `json:"events"` // events added
	Counts map[string]int64 `json:"counts"` // events by type (Event.Kind: a guard action is never an oom)

	Stages map[string]float64 `json:"stages_s"` // total seconds per span name (all names, all lanes; children separately)
	Lanes  map[string]float64 `json:"lanes_s"`  // busy seconds per lane: top-level stage spans on it

	WallS      float64 `json:"wall_s"`
	DataWaitS  float64 `json:"data_wait_s"`
	StagesS    float64 `json:"stages_total_s"` // T_stages
	SerialS    float64 `json:"serial_s"`       // T_serial
	IdealS     float64 `json:"ideal_s"`
	Overlap    float64 `json:"overlap"`
	Efficiency float64 `json:"efficiency"`

	Batches    int64       `json:"batches"` // train spans on lane compute
	Epochs     []EpochTime `json:"epochs"`
	EpochStats EpochStats  `json:"epoch_stats"`

	// Ranks are the training times of a distributed run's ranks, by
	// rank (nil for a run of one process); Straggler is the slowest
	// rank's over the median rank's (0 for a run of one process).
	Ranks     []RankTime `json:"ranks,omitempty"`
	Straggler float64    `json:"straggler,omitempty"`

	Metrics map[string]float64 `json:"metrics"` // last value per metric name (may be NaN)

	PeakBytes   int64   `json:"peak_bytes"`   // max mem peak
	BudgetBytes int64   `json:"budget_bytes"` // last mem budget
	StaleMean   float64 `json:"stale_mean"`   // mean of stale events' means
	StaleMax    float64 `json:"stale_max"`    // max of stale events' max
	// Cache totals the run's cache events (nil without any): input rows
	// found in the device feature cache and gathered from the host, and
	// the bytes copied host-to-device, in all and per epoch.
	Cache *CacheStats `json:"cache,omitempty"`
	// HistRelErr is the largest over layers of each layer's last hist_err
	// relative error: the histories' error at the last refresh (0 without
	// hist_err events).
	HistRelErr float64 `json:"hist_rel_err"`
}

// Stage returns the total seconds of spans named name (0 if none).
func (s *Summary) Stage(name string) float64 { return s.Stages[name] }

// EpochTime is one epoch's wall time.
type EpochTime struct {
	Epoch   int     `json:"epoch"`
	WallS   float64 `json:"wall_s"`
	Batches int     `json:"batches"` // train spans of the epoch on lane compute
}

// RankTime is one rank's share of a distributed run.
type RankTime struct {
	Rank   int     `json:"rank"`
	TrainS float64 `json:"train_s"` // the sum of its epoch times
	Epochs int     `json:"epochs"`  // epochs it trained
}

// EpochStats is the spread of epoch wall times, in seconds.
type EpochStats struct {
	N       int     `json:"n"`
	MeanS   float64 `json:"mean_s"`
	MinS    float64 `json:"min_s"`
	MedianS float64 `json:"median_s"`
	MaxS    float64 `json:"max_s"`
	StdS    float64 `json:"std_s"` // sample standard deviation (n−1); 0 for one epoch
}

// Aggregator computes a Summary incrementally: Add every event in journal
// order, call Summary at any time. A live tail and a finished journal fed
// through it give the same numbers. It is not safe for concurrent use.
type Aggregator struct {
	events int64
	counts map[string]int64
	stages map[string]int64 // ns per span name
	lanes  map[string]int64 // ns of top-level spans per lane

	hasSpan  bool
	minStart int64
	maxEnd   int64
	dataWait int64
	stagesNs int64
	trainNs  int64
	evalNs   int64
	batches  int64
	ranks    map[int]*rankAcc // by rank; -1 for lanes without a rank
	metrics  map[string]float64
	cores    int
	status   Status
	errMsg   string
	run      string
	variant  string
	peak     int64
	budget   int64
	staleSum float64
	// staleLow is staleSum scaled by 2^-64, which cannot overflow: the
	// mean comes from it when a journal's huge means overflow staleSum.
	staleLow float64
	staleN   int64
	// spanTotal is the sum of all span durations while it fits an int64;
	// saturate is set once it would not (see span)
	spanTotal int64
	saturate  bool
	staleMax  float64
	histErr   map[int]float64     // last finite hist_err rel_err per layer
	cache     map[int]*CacheCount // cache events summed per epoch
}

// rankAcc is the epoch accounting of one rank (of the whole run when it
// is not distributed).
type rankAcc struct {
	hasWork   bool  // a span other than setup was seen
	workStart int64 // earliest start of a span other than setup
	epochs    map[int]*epochAcc
}

type epochAcc struct {
	end      int64 // latest end of its train (compute lane) and eval spans
	hasTrain bool
	batches  int
}

// NewAggregator returns an empty Aggregator.
func NewAggregator() *Aggregator {
	return &Aggregator{
		counts:  map[string]int64{},
		stages:  map[string]int64{},
		lanes:   map[string]int64{},
		ranks:   map[int]*rankAcc{},
		metrics: map[string]float64{},
		histErr: map[int]float64{},
		cache:   map[int]*CacheCount{},
	}
}

// Add folds one event into the aggregation.
func (a *Aggregator) Add(e Event) { a.add(&e) }

// AddAll folds events in order.
func (a *Aggregator) AddAll(evs []Event) {
	for i := range evs {
		a.add(&evs[i])
	}
}

// add folds one event: a method per event type that carries figures.
func (a *Aggregator) add(e *Event) {
	a.events++
	a.counts[e.Kind()]++
	switch e.T {
	case TypeSpan:
		a.span(e)
	case TypeMetric:
		a.metrics[e.Name] = e.Value
	case TypeMem:
		a.mem(e)
	case TypeStale:
		a.stale(e)
	case TypeCache:
		a.cacheCount(e)
	case TypeHistErr:
		if !math.IsNaN(e.RelErr) && !math.IsInf(e.RelErr, 0) {
			a.histErr[e.Layer] = e.RelErr
		}
	case TypeRunStart:
		a.runStart(e)
	case TypeRunEnd:
		a.status, a.errMsg = e.Status, e.Error
	}
}

// mem keeps the largest batch peak and the latest budget.
func (a *Aggregator) mem(e *Event) {
	a.peak = max(a.peak, e.Peak)
	if e.Budget > 0 {
		a.budget = e.Budget
	}
}

// stale sums the finite staleness means and keeps the largest maximum.
func (a *Aggregator) stale(e *Event) {
	if !math.IsNaN(e.Mean) && !math.IsInf(e.Mean, 0) {
		a.staleSum += e.Mean
		a.staleLow += e.Mean * 0x1p-64
		a.staleN++
	}
	if !math.IsNaN(e.Max) && !math.IsInf(e.Max, 0) {
		a.staleMax = max(a.staleMax, e.Max)
	}
}

// cacheCount sums a batch's feature-cache outcome into its epoch's.
func (a *Aggregator) cacheCount(e *Event) {
	c := a.cache[e.Epoch]
	if c == nil {
		c = &CacheCount{}
		a.cache[e.Epoch] = c
	}
	c.add(CacheCount{Hits: e.Hits, Misses: e.Misses, BytesH2D: e.BytesH2D})
}

// runStart keeps the run's names and its host's cores.
func (a *Aggregator) runStart(e *Event) {
	a.run, a.variant = e.Run, e.Variant
	if e.Host != nil && e.Host.Cores > 0 {
		a.cores = e.Host.Cores
	}
}

func (a *Aggregator) span(e *Event) {
	dur := max(e.Dur, 0)
	end := addSat(e.Start, dur)
	if !a.hasSpan {
		a.hasSpan, a.minStart, a.maxEnd = true, e.Start, end
	} else {
		a.minStart = min(a.minStart, e.Start)
		a.maxEnd = max(a.maxEnd, end)
	}
	// Every stage and lane total is at most the sum of all durations, so
	// none can overflow while that sum does not: until then each is one
	// map update; past it, each saturates (a hostile journal's spans).
	if a.spanTotal > math.MaxInt64-dur {
		a.saturate = true
	}
	a.spanTotal += dur
	a.addTo(a.stages, e.Name, dur)
	rank, lane, ok := SplitRankLane(e.Lane)
	if !ok {
		rank = -1
	}
	ra := a.ranks[rank]
	if ra == nil {
		ra = &rankAcc{epochs: map[int]*epochAcc{}}
		a.ranks[rank] = ra
	}
	if e.Name != StageSetup && (!ra.hasWork || e.Start < ra.workStart) {
		ra.hasWork, ra.workStart = true, e.Start
	}
	compute := lane == LaneCompute
	switch e.Name {
	case StageWait:
		a.dataWait = addSat(a.dataWait, dur)
	case StageSample, StageTransfer:
		if compute {
			a.dataWait = addSat(a.dataWait, dur)
		}
	}
	if TopLevel(e.Name) {
		a.stagesNs = addSat(a.stagesNs, dur)
		a.addTo(a.lanes, e.Lane, dur)
	}
	isTrain := e.Name == StageTrain && compute
	switch e.Name {
	case StageTrain:
		a.trainNs = addSat(a.trainNs, dur)
	case StageEval:
		a.evalNs = addSat(a.evalNs, dur)
	}
	if !isTrain && e.Name != StageEval {
		return
	}
	ep := ra.epochs[e.Epoch]
	if ep == nil {
		ep = &epochAcc{}
		ra.epochs[e.Epoch] = ep
	}
	ep.end = max(ep.end, end)
	if isTrain {
		a.batches++
		ep.batches++
		ep.hasTrain = true
	}
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// addTo adds d (>= 0) to m[k], saturating once the span total could
// overflow (see span).
func (a *Aggregator) addTo(m map[string]int64, k string, d int64) {
	if a.saturate {
		m[k] = addSat(m[k], d)
		return
	}
	m[k] += d
}

// addSat returns a+b, or the int64 bound it passes: a hostile journal's
// times must not wrap sums of durations around to negative ones.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// subSat returns a-b, or the int64 bound it passes.
func subSat(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return addSat(a, -b)
}

// Summary returns the aggregation of the events added so far. The maps are
// fresh copies.
func (a *Aggregator) Summary() Summary {
	s := Summary{
		Status: a.status, Error: a.errMsg, Run: a.run, Variant: a.variant,
		Cores:     max(a.cores, 1),
		Events:    a.events,
		Counts:    make(map[string]int64, len(a.counts)),
		Stages:    make(map[string]float64, len(a.stages)),
		Lanes:     make(map[string]float64, len(a.lanes)),
		Metrics:   make(map[string]float64, len(a.metrics)),
		DataWaitS: seconds(a.dataWait),
		StagesS:   seconds(a.stagesNs),
		SerialS:   seconds(max(a.trainNs, a.evalNs)),
		Batches:   a.batches,
		PeakBytes: a.peak, BudgetBytes: a.budget, StaleMax: a.staleMax,
	}
	for k, v := range a.counts {
		s.Counts[k] = v
	}
	for k, v := range a.stages {
		s.Stages[k] = seconds(v)
	}
	for k, v := range a.lanes {
		s.Lanes[k] = seconds(v)
	}
	for k, v := range a.metrics {
		s.Metrics[k] = v
	}
	if a.staleN > 0 {
		s.StaleMean = a.staleSum / float64(a.staleN)
		if math.IsInf(s.StaleMean, 0) {
			s.StaleMean = a.staleLow / float64(a.staleN) * 0x1p64
		}
	}
	for _, v := range a.histErr {
		s.HistRelErr = max(s.HistRelErr, v)
	}
	if a.hasSpan {
		wall := subSat(a.maxEnd, a.minStart)
		s.WallS = seconds(wall)
		ideal := max(float64(max(a.trainNs, a.evalNs)), float64(a.stagesNs)/float64(s.Cores))
		s.IdealS = ideal / 1e9
		if wall > 0 {
			s.Overlap = float64(a.stagesNs) / float64(wall)
			s.Efficiency = min(ideal/float64(wall), 1)
		}
	}
	s.Epochs = a.epochTimes(&s)
	s.EpochStats = epochStats(s.Epochs)
	s.Cache = a.cacheStats()
	return s
}

// epochTimes returns the epoch times, in epoch order: per rank, then the
// slowest rank's per epoch; it sets s.Ranks and s.Straggler for a run of
// several ranks.
func (a *Aggregator) epochTimes(s *Summary) []EpochTime {
	byEpoch := map[int]*EpochTime{}
	for rank, ra := range a.ranks {
		eps := ra.times()
		if rank >= 0 {
			rt := RankTime{Rank: rank, Epochs: len(eps)}
			for _, ep := range eps {
				rt.TrainS += ep.WallS
			}
			s.Ranks = append(s.Ranks, rt)
		}
		for _, ep := range eps {
			if cur := byEpoch[ep.Epoch]; cur == nil {
				c := ep
				byEpoch[ep.Epoch] = &c
			} else {
				cur.WallS = max(cur.WallS, ep.WallS)
				cur.Batches += ep.Batches
			}
		}
	}
	out := make([]EpochTime, 0, len(byEpoch))
	for _, ep := range byEpoch {
		out = append(out, *ep)
	}
	slices.SortFunc(out, func(x, y EpochTime) int { return x.Epoch - y.Epoch })
	if len(s.Ranks) < 2 {
		s.Ranks = nil
		return out
	}
	slices.SortFunc(s.Ranks, func(x, y RankTime) int { return x.Rank - y.Rank })
	w := make([]float64, len(s.Ranks))
	for i, r := range s.Ranks {
		w[i] = r.TrainS
	}
	if sp := Spread(w); sp.MedianS > 0 {
		s.Straggler = sp.MaxS / sp.MedianS
	}
	return out
}

// times returns one rank's epoch times in epoch order (see Summary).
func (ra *rankAcc) times() []EpochTime {
	out := []EpochTime{}
	for ep, acc := range ra.epochs {
		if acc.hasTrain {
			out = append(out, EpochTime{Epoch: ep, WallS: seconds(acc.end), Batches: acc.batches})
		}
	}
	slices.SortFunc(out, func(x, y EpochTime) int { return x.Epoch - y.Epoch })
	// WallS holds each epoch's end so far: turn ends into durations.
	prev := seconds(ra.workStart)
	for i := range out {
		end := out[i].WallS
		out[i].WallS = max(end-prev, 0)
		prev = max(prev, end)
	}
	return out
}

func epochStats(epochs []EpochTime) EpochStats {
	w := make([]float64, len(epochs))
	for i, e := range epochs {
		w[i] = e.WallS
	}
	return Spread(w)
}

// Spread returns the spread of epoch times w, in seconds: mean, sample
// standard deviation (n−1), min, median and max. w is not modified.
func Spread(w []float64) EpochStats {
	n := len(w)
	if n == 0 {
		return EpochStats{}
	}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	w = slices.Clone(w)
	slices.Sort(w)
	st := EpochStats{N: n, MinS: w[0], MaxS: w[n-1], MeanS: sum / float64(n)}
	if n%2 == 1 {
		st.MedianS = w[n/2]
	} else {
		st.MedianS = (w[n/2-1] + w[n/2]) / 2
	}
	if n > 1 {
		ss := 0.0
		for _, x := range w {
			ss += (x - st.MeanS) * (x - st.MeanS)
		}
		st.StdS = math.Sqrt(ss / float64(n-1))
	}
	return st
}

// Summarize aggregates a whole journal's events.
func Summarize(evs []Event) Summary {
	a := NewAggregator()
	a.AddAll(evs)
	return a.Summary()
}

// jsonFloat encodes non-finite values as "NaN", "Inf", "-Inf", like events.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) { return appendFloat(nil, float64(f)), nil }

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	d := decoder{b: b}
	v, err := d.float()
	if err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

type summaryAlias Summary

// MarshalJSON encodes the summary; metric values that are not finite (a
// diverged loss) are written as "NaN", "Inf" or "-Inf".
func (s Summary) MarshalJSON() ([]byte, error) {
	m := make(map[string]jsonFloat, len(s.Metrics))
	for k, v := range s.Metrics {
		m[k] = jsonFloat(v)
	}
	return json.Marshal(struct {
		summaryAlias
		Metrics map[string]jsonFloat `json:"metrics"`
	}{summaryAlias(s), m})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var v struct {
		summaryAlias
		Metrics map[string]jsonFloat `json:"metrics"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Summary(v.summaryAlias)
	if v.Metrics != nil {
		s.Metrics = make(map[string]float64, len(v.Metrics))
		for k, f := range v.Metrics {
			s.Metrics[k] = float64(f)
		}
	}
	return nil
}
