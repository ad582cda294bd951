package featcache

import (
	"fmt"
	"sync"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Outcome is what a cache did for some batches: input rows found in the
// cache (hits), rows gathered from host memory (misses) and the bytes
// those crossed to the device.
type Outcome struct {
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	BytesH2D int64   `json:"bytes_h2d"`
	HitRate  float64 `json:"hit_rate"` // Hits / (Hits + Misses); 0 without rows
}

// add counts one batch's outcome and updates the hit rate.
func (o *Outcome) add(hits, misses, bytes int64) {
	o.Hits += hits
	o.Misses += misses
	o.BytesH2D += bytes
	o.HitRate = 0
	if n := o.Hits + o.Misses; n > 0 {
		o.HitRate = float64(o.Hits) / float64(n)
	}
}

// Tally sums batches' outcomes per epoch; it is safe for concurrent use
// (sampler workers gather batches ahead) and a nil Tally counts nothing.
type Tally struct {
	mu     sync.Mutex
	epochs map[int]*Outcome
}

// Add counts a batch of epoch: hits and misses rows, bytes moved.
func (t *Tally) Add(epoch int, hits, misses, bytes int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.epochs == nil {
		t.epochs = map[int]*Outcome{}
	}
	o := t.epochs[epoch]
	if o == nil {
		o = &Outcome{}
		t.epochs[epoch] = o
	}
	o.add(hits, misses, bytes)
}

// Epoch returns epoch's outcome so far (nil for a nil Tally).
func (t *Tally) Epoch(epoch int) *Outcome {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	o := Outcome{}
	if e := t.epochs[epoch]; e != nil {
		o = *e
	}
	return &o
}

// Report is a run's cache: what it held and its outcome per epoch and over
// the epochs in all.
type Report struct {
	Policy Policy  `json:"policy"`
	Rows   int     `json:"rows"`  // rows resident
	Share  float64 `json:"share"` // of the feature matrix's rows
	Bytes  int64   `json:"bytes"` // device bytes held
	Outcome
	Epochs []EpochOutcome `json:"epochs"`
}

// EpochOutcome is one epoch's share of a Report.
type EpochOutcome struct {
	Epoch int `json:"epoch"`
	Outcome
}

// NewReport describes c, built under policy for a matrix of nodes rows,
// before any outcome.
func NewReport(c *Cache, policy Policy, nodes int) *Report {
	r := &Report{Policy: policy, Rows: len(c.Nodes), Bytes: c.Bytes()}
	if nodes > 0 {
		r.Share = float64(r.Rows) / float64(nodes)
	}
	return r
}

// Fill sets r's outcomes to those t counted for epochs 1..epochs.
func (t *Tally) Fill(r *Report, epochs int) {
	r.Outcome, r.Epochs = Outcome{}, nil
	if t == nil {
		return
	}
	for e := 1; e <= epochs; e++ {
		o := t.Epoch(e)
		r.Epochs = append(r.Epochs, EpochOutcome{Epoch: e, Outcome: *o})
		r.add(o.Hits, o.Misses, o.BytesH2D)
	}
}

// Note is the line run_start's plan records for the cache: its policy,
// rows, bytes and share of the matrix; covered, when not negative, is the
// share of the pre-sampling pass's row accesses it holds.
func (r *Report) Note(covered float64) string {
	s := fmt.Sprintf("feature cache: %s policy, %d rows (%.1f %% of the feature matrix), %s on the device",
		r.Policy, r.Rows, 100*r.Share, units.FormatSize(r.Bytes))
	if covered >= 0 {
		s += fmt.Sprintf("; it holds %.1f %% of the pre-sampling pass's row accesses", 100*covered)
	}
	return s
}
