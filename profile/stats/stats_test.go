package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if !reflect.DeepEqual(xs, []float64{3, 1, 2}) {
		t.Errorf("Median modified its input: %v", xs)
	}
}

func TestVariantMedian(t *testing.T) {
	reps := []Repeat{{1, []float64{1, 2, 9}}, {2, []float64{4, 4}}, {3, []float64{3}}, {4, nil}}
	if got := VariantMedian(reps); got != 3 {
		t.Errorf("VariantMedian = %v, want 3 (median of 2, 4, 3)", got)
	}
}

func TestCompareRepeats(t *testing.T) {
	base := []Repeat{{1, []float64{2, 2}}, {2, []float64{3}}, {3, []float64{4}}, {4, []float64{2}}}
	opt := []Repeat{{3, []float64{2}}, {1, []float64{1}}, {2, []float64{2}}, {5, []float64{1}}}
	s := Compare(base, opt)
	if s.Method != MethodRepeats || s.Repeats != 3 || s.Single {
		t.Fatalf("Compare = %+v, want 3 paired repeats", s)
	}
	if !reflect.DeepEqual(s.Ratios, []float64{2, 1.5, 2}) || s.Ratio != 2 {
		t.Errorf("ratios %v (median %v), want [2 1.5 2] in repeat order, median 2", s.Ratios, s.Ratio)
	}
	if s.Lo < 1.5 || s.Hi > 2 || s.Lo > s.Hi {
		t.Errorf("interval [%v, %v] outside the ratios' range", s.Lo, s.Hi)
	}
	if again := Compare(base, opt); !reflect.DeepEqual(again, s) {
		t.Errorf("not reproducible: %+v then %+v", s, again)
	}
	e := Estimate(base, opt)
	if e.Ratio != s.Ratio || !reflect.DeepEqual(e.Ratios, s.Ratios) || e.Method != "" || e.Lo != 0 || e.Hi != 0 {
		t.Errorf("Estimate = %+v, want Compare's ratio without interval", e)
	}
}

// TestCompareEpochs is the repro of six identical single runs whose
// intervals over epochs did not overlap (0.92x [0.80, 0.98] ... 1.75x
// [1.61, 1.87]): epochs of one run are not independent samples, so a
// speedup from fewer than MinRepeats paired repeats has the ratio of the
// epoch medians, the single-run mark and no interval.
func TestCompareEpochs(t *testing.T) {
	s := Compare([]Repeat{{1, []float64{2, 2.2, 1.8, 2}}}, []Repeat{{1, []float64{1, 1.1, 0.9, 1}}})
	if !s.Single || s.Repeats != 1 || s.Ratio != 2 {
		t.Fatalf("single runs: %+v", s)
	}
	if s.HasInterval() || s.Method != "" {
		t.Errorf("single runs: interval [%v, %v] by %q, want none", s.Lo, s.Hi, s.Method)
	}
	two := Compare([]Repeat{{1, []float64{2, 2}}, {2, []float64{2.2, 2.2}}}, []Repeat{{1, []float64{1, 1}}, {2, []float64{1, 1}}})
	if two.Single || two.Repeats != 2 || two.HasInterval() {
		t.Errorf("two repeats: %+v, want a ratio without interval", two)
	}
	one := Compare([]Repeat{{1, []float64{2}}}, []Repeat{{1, []float64{1}}})
	if one.Ratio != 2 || one.HasInterval() || !one.Single {
		t.Errorf("one epoch a side: %+v, want a ratio without interval", one)
	}
	none := Compare([]Repeat{{1, []float64{2}}}, []Repeat{{1, nil}})
	if none.Ratio != 0 || none.HasInterval() || none.Ratios == nil {
		t.Errorf("no epochs: %+v", none)
	}
}

// simulate draws repeats of lognormal epoch times (median m, log sd sigma),
// each repeat scaled by a drift shared by both variants of that repeat.
func simulate(rng *rand.Rand, m, sigma float64, drift []float64, epochs int) []Repeat {
	out := make([]Repeat, len(drift))
	for k := range out {
		ep := make([]float64, epochs)
		for i := range ep {
			ep[i] = m * drift[k] * math.Exp(sigma*rng.NormFloat64())
		}
		out[k] = Repeat{K: k + 1, Epochs: ep}
	}
	return out
}

// coverage returns the share of sims intervals that hold the true ratio.
func coverage(t *testing.T, sims, repeats, epochs int, method string) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const baseM, optM, sigma = 1.0, 0.76, 0.15 // true speedup 1/0.76
	truth := baseM / optM
	hit := 0
	for range sims {
		drift := make([]float64, repeats)
		for k := range drift {
			drift[k] = math.Exp(0.3 * rng.NormFloat64())
		}
		s := Compare(simulate(rng, baseM, sigma, drift, epochs), simulate(rng, optM, sigma, drift, epochs))
		if s.Method != method {
			t.Fatalf("method %q, want %q", s.Method, method)
		}
		if s.Lo <= truth && truth <= s.Hi {
			hit++
		}
	}
	return float64(hit) / float64(sims)
}

// TestIntervalCoverage checks the nominal 95 % intervals against a known
// distribution: over 1000 simulated experiments with lognormal epoch
// times, the interval must hold the true ratio 90 to 98 % of the time.
func TestIntervalCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for _, c := range []struct {
		name            string
		repeats, epochs int
		method          string
	}{
		{"5 repeats", 5, 5, MethodRepeats},
	} {
		t.Run(c.name, func(t *testing.T) {
			cov := coverage(t, 1000, c.repeats, c.epochs, c.method)
			t.Logf("coverage %.3f", cov)
			if cov < 0.90 || cov > 0.98 {
				t.Errorf("coverage %.3f of the nominal 95 %% interval, want 0.90..0.98", cov)
			}
		})
	}
}
