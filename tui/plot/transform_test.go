package plot

import (
	"math"
	"testing"
)

// TestEMA checks the smoothing against a float64 reference written out:
// the bias-corrected average of the values seen so far.
func TestEMA(t *testing.T) {
	vs := []float64{1, 3, math.NaN(), 2, 10}
	a := 0.5
	got := Transform{EMA: a}.Apply(vs)
	// reference: weights a^k over the finite values, newest first
	ref := func(fin []float64) float64 {
		num, den := 0.0, 0.0
		for k := range fin {
			w := math.Pow(a, float64(k))
			num += w * fin[len(fin)-1-k]
			den += w
		}
		return num / den
	}
	want := []float64{ref(vs[:1]), ref(vs[:2]), math.NaN(), ref([]float64{1, 3, 2}), ref([]float64{1, 3, 2, 10})}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
			t.Errorf("value %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := (Transform{}).Apply(vs); &got[0] != &vs[0] {
		t.Error("no transform copied the values")
	}
}

func TestLog(t *testing.T) {
	got := Transform{Log: true}.Apply([]float64{100, 0, -1, 0.01})
	if got[0] != 2 || !math.IsNaN(got[1]) || !math.IsNaN(got[2]) || math.Abs(got[3]+2) > 1e-12 {
		t.Errorf("log: %v", got)
	}
	if l := (Transform{EMA: 0.9, Log: true}).Label(); l != "EMA 0.9, log" {
		t.Errorf("label %q", l)
	}
	if (Transform{}).Label() != "" || (Transform{EMA: 0.9}).Key() == (Transform{EMA: 0.9, Log: true}).Key() {
		t.Error("label or key")
	}
}
