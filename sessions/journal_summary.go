package sessions

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/gpubreak"
)

// JournalSummary is what one pass over a journal gathers without holding
// its events: the profile aggregation plus what a comparison needs beyond
// it.
type JournalSummary struct {
	// Summary is profile's aggregation of every event (stage totals, data
	// wait, overlap, efficiency, epoch times, last metric values, peak
	// memory, staleness, counts by type).
	Summary profile.Summary
	// Start is the first run_start event (config, host, wall clock), End
	// the last run_end event; nil when the journal has none.
	Start *profile.Event
	End   *profile.Event
	// Mem summarizes the mem events' per-batch peaks.
	Mem MemFigures
	// Read is what reading the file met (lines, malformed, torn).
	Read ReadStats
	// GPU is the GPU's own breakdown (nil without device-side spans).
	GPU *gpubreak.Breakdown
}

// GPUTop is how many kernels a summary's GPU breakdown lists.
const GPUTop = 10

// MemFigures summarizes a run's mem events.
type MemFigures struct {
	Events     int64 `json:"events"`      // mem events
	PeakMax    int64 `json:"peak_max"`    // the largest per-batch peak, bytes
	PeakP99    int64 `json:"peak_p99"`    // the 99th percentile of per-batch peaks (nearest rank), bytes
	PeakMean   int64 `json:"peak_mean"`   // mean per-batch peak, bytes
	Budget     int64 `json:"budget"`      // the last budget reported (0 if none)
	LiveMax    int64 `json:"live_max"`    // the largest live figure reported, bytes
	OverBudget int64 `json:"over_budget"` // batches whose peak exceeded a positive budget
}

// Percentile returns the p-th percentile (0 < p <= 100) of xs by the
// nearest-rank method: the smallest value such that at least p% of the
// values are at most it. xs is sorted in place; 0 for an empty slice.
func Percentile(xs []int64, p float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	rank := int(math.Ceil(p / 100 * float64(len(xs))))
	rank = min(max(rank, 1), len(xs))
	return xs[rank-1]
}

// journalAcc accumulates a JournalSummary event by event.
type journalAcc struct {
	agg      *profile.Aggregator
	one      []profile.Event // scratch: the event being added, for AddAll
	start    *profile.Event
	end      *profile.Event
	peaks    []int64
	peakSum  float64
	mem      MemFigures
	hasStart bool
	gpu      *gpubreak.Builder
}

func newJournalAcc() *journalAcc {
	return &journalAcc{agg: profile.NewAggregator(), one: make([]profile.Event, 1), gpu: gpubreak.NewBuilder()}
}

// add folds the event in acc.one[0] into the summary.
func (acc *journalAcc) add() {
	e := &acc.one[0]
	acc.agg.AddAll(acc.one)
	acc.gpu.Add(e)
	switch e.T {
	case profile.TypeMem:
		acc.mem.Events++
		acc.peaks = append(acc.peaks, e.Peak)
		acc.peakSum += float64(e.Peak)
		acc.mem.PeakMax = max(acc.mem.PeakMax, e.Peak)
		acc.mem.LiveMax = max(acc.mem.LiveMax, e.Live)
		if e.Budget > 0 {
			acc.mem.Budget = e.Budget
			if e.Peak > e.Budget {
				acc.mem.OverBudget++
			}
		}
	case profile.TypeRunStart:
		if !acc.hasStart {
			c := *e
			acc.start, acc.hasStart = &c, true
		}
	case profile.TypeRunEnd:
		c := *e
		acc.end = &c
	}
}

func (acc *journalAcc) result(st ReadStats) JournalSummary {
	js := JournalSummary{Summary: acc.agg.Summary(), Start: acc.start, End: acc.end, Mem: acc.mem, Read: st, GPU: acc.gpu.Result(GPUTop)}
	if n := len(acc.peaks); n > 0 {
		js.Mem.PeakP99 = Percentile(acc.peaks, 99)
		js.Mem.PeakMean = int64(acc.peakSum / float64(n))
	}
	return js
}

// SummarizeReader aggregates a journal read from r in one streaming pass
// (see SummarizeJournal).
func SummarizeReader(r io.Reader) (JournalSummary, error) {
	acc := newJournalAcc()
	st, err := scanInto(r, &acc.one[0], func(*profile.Event) error {
		acc.add()
		return nil
	})
	return acc.result(st), err
}

// SummarizeJournal aggregates the journal at path in one streaming pass:
// events are decoded one at a time into the same storage and folded into a
// profile.Aggregator, so memory does not grow with the journal (but for 8
// bytes per mem event, kept for the percentile, and what the GPU
// breakdown keeps: see profile/gpubreak). Malformed and torn lines
// are skipped and counted in Read, as ReadJournal does; only failing to
// read the file is an error.
func SummarizeJournal(path string) (JournalSummary, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return JournalSummary{}, fmt.Errorf("read journal %s: %w", path, err)
	}
	defer f.Close()
	js, err := SummarizeReader(f)
	if err != nil {
		return js, fmt.Errorf("read journal %s: %w", path, err)
	}
	return js, nil
}
