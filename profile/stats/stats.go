package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Interval methods (Speedup.Method).
const (
	// MethodRepeats: the interval is a bootstrap over the per-repeat
	// ratios (at least MinRepeats paired repeats).
	MethodRepeats = "repeats"
	// MethodEpochs named a bootstrap over the epoch times of each side,
	// resampled independently, which journals' JSON of earlier versions
	// may still carry. Compare no longer gives it: the epochs of one run
	// are not independent samples of its speed (a run's host load and
	// placement hold for all of them; identical single runs on a loaded
	// two-core host gave 0.92x [0.80, 0.98] and 1.75x [1.61, 1.87]), so
	// fewer than MinRepeats paired repeats get no interval.
	MethodEpochs = "epochs"
)

// MinRepeats is the number of paired repeats from which the interval is a
// bootstrap over per-repeat ratios rather than over epochs.
const MinRepeats = 3

// Level is the coverage of the intervals: 95 %.
const Level = 0.95

// Resamples is the number of bootstrap resamples.
const Resamples = 2000

// seed fixes the bootstrap's generator so the same figures give the same
// interval on every run and in every view.
const seed = 0x676e6e73636f7065

// Median returns the median of xs (0 for none); xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Repeat is one repeat of a variant: its number (from 1; runs of the same
// number are paired across variants) and its epoch wall times in seconds.
type Repeat struct {
	K      int
	Epochs []float64
}

// Median is the repeat's median epoch time (0 without epochs).
func (r Repeat) Median() float64 { return Median(positive(r.Epochs)) }

// VariantMedian is a variant's epoch time: the median over its repeats of
// each repeat's median epoch time (for a single run, the median over its
// epochs). 0 when no repeat has an epoch.
func VariantMedian(reps []Repeat) float64 {
	var m []float64
	for _, r := range reps {
		if v := r.Median(); v > 0 {
			m = append(m, v)
		}
	}
	return Median(m)
}

// Speedup is one variant's speedup over the baseline with its interval.
type Speedup struct {
	// Ratio is the speedup: the median of the per-repeat ratios with
	// MethodRepeats, else the baseline's median epoch time (all its
	// repeats' epochs) over the variant's. 0 when unknown.
	Ratio float64 `json:"ratio"`
	// Lo and Hi bound the Level interval (both 0 when there is too little
	// to resample: fewer than two epochs on a side).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Method says what the bootstrap resampled (MethodRepeats,
	// MethodEpochs; "" without an interval).
	Method string `json:"method"`
	// Repeats is the number of paired repeats; Ratios their ratios
	// (baseline's median epoch time over the variant's, repeat by repeat,
	// in repeat order).
	Repeats int       `json:"repeats"`
	Ratios  []float64 `json:"ratios"`
	// Single is set when either side is a single run.
	Single bool `json:"single"`
}

// HasInterval reports whether s has an interval.
func (s Speedup) HasInterval() bool { return s.Method != "" && s.Hi > 0 }

// Estimate is Compare without the interval (Lo, Hi and Method stay
// zero): the speedup, the per-repeat ratios and the single-run mark, for
// views that redraw often and show the ratio alone.
func Estimate(base, variant []Repeat) Speedup {
	s, _, _ := estimate(base, variant)
	return s
}

// Compare computes the speedup of variant over base, both given as their
// repeats (runs with no usable epoch are best left out by the caller).
// Repeats are paired by K. With at least MinRepeats pairs, the speedup is
// the median of the per-pair ratios and its interval a percentile
// bootstrap of that median over the pairs, the repeats being the
// independent samples. With fewer, it is the ratio of the medians of all
// epochs, without interval: epochs of one run share its host's state and
// are not independent samples (see MethodEpochs), and a resampling of
// them gives intervals that other runs of the same experiment fall
// outside of. The generator has a fixed seed: the same input gives the
// same interval.
func Compare(base, variant []Repeat) Speedup {
	s, _, _ := estimate(base, variant)
	if s.Repeats < MinRepeats {
		return s
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(s.Ratios))))
	s.Lo, s.Hi = bootstrap(func(buf []float64) float64 {
		return Median(resample(rng, s.Ratios, buf))
	}, len(s.Ratios))
	s.Method = MethodRepeats
	return s
}

// estimate returns the speedup without interval and, when it comes from
// epochs (fewer than MinRepeats pairs), the pooled epochs of each side.
func estimate(base, variant []Repeat) (s Speedup, be, ve []float64) {
	s.Ratios = []float64{}
	bm := map[int]float64{}
	for _, r := range base {
		if m := r.Median(); m > 0 {
			bm[r.K] = m
		}
	}
	vs := slices.Clone(variant)
	slices.SortStableFunc(vs, func(a, b Repeat) int { return a.K - b.K })
	for _, r := range vs {
		if m, b := r.Median(), bm[r.K]; m > 0 && b > 0 {
			s.Ratios = append(s.Ratios, b/m)
		}
	}
	s.Repeats = len(s.Ratios)
	s.Single = usable(base) <= 1 || usable(variant) <= 1
	if s.Repeats >= MinRepeats {
		s.Ratio = Median(s.Ratios)
		return s, nil, nil
	}
	be, ve = pooled(base), pooled(variant)
	if len(be) > 0 && len(ve) > 0 {
		s.Ratio = Median(be) / Median(ve)
	}
	return s, be, ve
}

// usable counts the repeats with at least one epoch.
func usable(reps []Repeat) int {
	n := 0
	for _, r := range reps {
		if r.Median() > 0 {
			n++
		}
	}
	return n
}

// pooled returns every positive epoch time of reps.
func pooled(reps []Repeat) []float64 {
	var out []float64
	for _, r := range reps {
		out = append(out, positive(r.Epochs)...)
	}
	return out
}

func positive(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// resample draws len(xs) values of xs with replacement into buf.
func resample(rng *rand.Rand, xs, buf []float64) []float64 {
	buf = buf[:len(xs)]
	for i := range buf {
		buf[i] = xs[rng.IntN(len(xs))]
	}
	return buf
}

// bootstrap returns the Level percentile interval of Resamples values of
// stat, which gets a scratch slice of n values.
func bootstrap(stat func(buf []float64) float64, n int) (lo, hi float64) {
	buf := make([]float64, n)
	vals := make([]float64, Resamples)
	for i := range vals {
		vals[i] = stat(buf)
	}
	slices.Sort(vals)
	a := (1 - Level) / 2
	return quantile(vals, a), quantile(vals, 1-a)
}

// quantile returns the q quantile of sorted xs (linear interpolation).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}
