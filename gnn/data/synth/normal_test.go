package synth

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

func TestGaussMoments(t *testing.T) {
	r := rng.New(99)
	const n = 1 << 20
	var s1, s2, s4 float64
	tail3, tail4 := 0, 0
	// Counts below a few quantiles of N(0,1).
	qs := []float64{-2, -1, -0.5, 0, 0.5, 1, 2}
	below := make([]int, len(qs))
	for i := 0; i < n; i++ {
		x := gauss(r)
		s1 += x
		s2 += x * x
		s4 += x * x * x * x
		if math.Abs(x) > 3 {
			tail3++
		}
		if math.Abs(x) > zigR {
			tail4++
		}
		for k, q := range qs {
			if x < q {
				below[k]++
			}
		}
	}
	mean, variance, kurt := s1/n, s2/n, s4/n
	if math.Abs(mean) > 0.005 || math.Abs(variance-1) > 0.01 || math.Abs(kurt-3) > 0.05 {
		t.Errorf("mean %.4f variance %.4f fourth moment %.4f, want 0, 1, 3", mean, variance, kurt)
	}
	// P(|X| > 3) = 0.0026998, P(|X| > 3.4426) = 0.000576.
	if p := float64(tail3) / n; math.Abs(p-0.0026998) > 0.0003 {
		t.Errorf("P(|X| > 3) = %.5f, want 0.00270", p)
	}
	if p := float64(tail4) / n; math.Abs(p-0.000576) > 0.00012 {
		t.Errorf("P(|X| > r) = %.6f, want 0.000576", p)
	}
	for k, q := range qs {
		want := 0.5 * math.Erfc(-q/math.Sqrt2)
		if got := float64(below[k]) / n; math.Abs(got-want) > 0.002 {
			t.Errorf("P(X < %g) = %.4f, want %.4f", q, got, want)
		}
	}
}
