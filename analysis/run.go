package analysis

import (
	"math"

	"github.com/gnnscope/gnnscope/profile"
)

// Run is the analysis of one run: its ledger and verdict, its validation
// accuracy over time, and the figures the advice reads.
type Run struct {
	Name    string         `json:"run"`
	Variant string         `json:"variant,omitempty"`
	Status  profile.Status `json:"status,omitempty"` // run_end's; empty while running
	Error   string         `json:"error,omitempty"`
	Config  RunConfig      `json:"config"`

	Ledger Ledger `json:"ledger"`
	// Training is the ledger's whole run without its setup
	// (Ledger.Training); Verdict and the advice judge it.
	Training Window  `json:"training"`
	Verdict  Verdict `json:"verdict"`
	// RankSteps compares a distributed run's ranks step by step: the
	// slowest rank of each step, and each rank's alignment residual (nil
	// for a run of one process).
	RankSteps *RankSteps `json:"rank_steps,omitempty"`

	// Curve is the validation accuracy after each evaluated epoch, timed
	// from WorkStartS (the first span that is not setup: the first touch
	// of data), evaluation included.
	Curve      []AccPoint `json:"curve,omitempty"`
	WorkStartS float64    `json:"work_start_s"`

	PeakBytes    int64   `json:"peak_bytes,omitempty"`   // largest mem peak
	BudgetBytes  int64   `json:"budget_bytes,omitempty"` // last mem budget
	GuardActions int     `json:"guard_actions,omitempty"`
	GuardPeak    int64   `json:"guard_peak,omitempty"` // largest predicted peak of a batch the guard changed
	GuardS       float64 `json:"guard_s,omitempty"`    // total of guard spans
	OOMs         int     `json:"ooms,omitempty"`
	StaleMean    float64 `json:"stale_mean,omitempty"` // mean of stale events' means
	StaleMax     float64 `json:"stale_max,omitempty"`
}

// AccPoint is one evaluation: the validation accuracy of an epoch and
// when it was known, in seconds from the first touch of data.
type AccPoint struct {
	Epoch  int     `json:"epoch"`
	TimeS  float64 `json:"time_s"`
	ValAcc float64 `json:"val_acc"`
}

// ValAccMetrics returns the metric names read as validation accuracy, in
// order of preference: the engine writes val_acc; a trainer profiled
// with the Python client writes what its loop or Lightning names it.
func ValAccMetrics() []string {
	return []string{"val_acc", "valid_acc", "val_accuracy", "val/acc", "acc_val"}
}

// RunBuilder analyses one run from its events, fed one at a time in
// journal order (a merged distributed run included). Memory is the
// ledger's (see LedgerBuilder) plus one point per evaluated epoch.
type RunBuilder struct {
	run     Run
	ledger  *LedgerBuilder
	steps   *StepBuilder
	counts  bool            // RankSteps: the counts alone (CountStepsOnly)
	clock   int64           // latest span end seen
	evalEnd map[int]int64   // latest eval span end per epoch label
	acc     map[int]float64 // per epoch: the last value of the preferred metric
	accAt   map[int]int64
	accRank map[int]int // preference of the metric stored
	hasWork bool
	work    int64
	staleN  int
	stale   float64
}

// NewRunBuilder returns an empty builder.
func NewRunBuilder() *RunBuilder {
	return &RunBuilder{ledger: NewLedgerBuilder(), steps: NewStepBuilder(), evalEnd: map[int]int64{},
		acc: map[int]float64{}, accAt: map[int]int64{}, accRank: map[int]int{}}
}

// CountStepsOnly makes Run's RankSteps say how often each rank was the
// slowest of a step, kept up to date as spans come, without each step's
// slowest rank and the ranks' residuals: those sort every step's
// figures, tens of milliseconds for 64 ranks of 20,000 steps, too much
// for a live view that asks every second.
func (b *RunBuilder) CountStepsOnly() { b.counts = true }

// Add folds one event into the analysis.
func (b *RunBuilder) Add(e *profile.Event) {
	r := &b.run
	switch e.Kind() {
	case profile.TypeRunStart:
		r.Name, r.Variant, r.Config = e.Run, e.Variant, parseConfig(e)
	case profile.TypeRunEnd:
		r.Status, r.Error = e.Status, e.Error
	case profile.TypeSpan:
		b.span(e)
	case profile.TypeMetric:
		b.metric(e)
	case profile.TypeMem:
		r.PeakBytes = max(r.PeakBytes, e.Peak)
		if e.Budget > 0 {
			r.BudgetBytes = e.Budget
		}
	case profile.TypeGuard:
		r.GuardActions++
		r.GuardPeak = max(r.GuardPeak, e.Predicted)
	case profile.TypeOOM:
		r.OOMs++
	case profile.TypeStale:
		if finite(e.Mean) {
			b.stale += e.Mean
			b.staleN++
		}
		if finite(e.Max) {
			r.StaleMax = max(r.StaleMax, e.Max)
		}
	}
}

func (b *RunBuilder) span(e *profile.Event) {
	b.ledger.Add(e)
	b.steps.Add(e)
	end := e.Start + max(e.Dur, 0)
	if end < e.Start {
		end = math.MaxInt64
	}
	b.clock = max(b.clock, end)
	if e.Name != profile.StageSetup && (!b.hasWork || e.Start < b.work) {
		b.hasWork, b.work = true, e.Start
	}
	switch e.Name {
	case profile.StageEval:
		b.evalEnd[e.Epoch] = max(b.evalEnd[e.Epoch], end)
	case profile.StageGuard:
		b.run.GuardS += seconds(max(e.Dur, 0))
	}
}

// metric keeps the validation accuracy of each epoch, timed by the end
// of the epoch's evaluation when it has one, else by the latest span end
// seen before it.
func (b *RunBuilder) metric(e *profile.Event) {
	pref := -1
	for i, n := range ValAccMetrics() {
		if e.Name == n {
			pref = i
		}
	}
	if pref < 0 || !finite(e.Value) {
		return
	}
	if old, ok := b.accRank[e.Epoch]; ok && old < pref {
		return
	}
	at := b.clock
	if t, ok := b.evalEnd[e.Epoch]; ok {
		at = t
	}
	b.acc[e.Epoch], b.accAt[e.Epoch], b.accRank[e.Epoch] = e.Value, at, pref
}

// Run returns the analysis of the events so far; the builder can go on
// taking events.
func (b *RunBuilder) Run() *Run {
	r := b.run
	r.Ledger = b.ledger.Ledger()
	r.Training = r.Ledger.Training()
	r.Verdict = VerdictOf(&r.Training, r.Config.External)
	if b.counts {
		r.RankSteps = b.steps.Counts()
	} else {
		r.RankSteps = b.steps.Steps()
	}
	if b.staleN > 0 {
		r.StaleMean = b.stale / float64(b.staleN)
	}
	if b.hasWork {
		r.WorkStartS = seconds(b.work)
	}
	r.Curve = nil
	for ep, v := range b.acc {
		r.Curve = append(r.Curve, AccPoint{Epoch: ep, TimeS: seconds(b.accAt[ep]) - r.WorkStartS, ValAcc: v})
	}
	sortCurve(r.Curve)
	return &r
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
