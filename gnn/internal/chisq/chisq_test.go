package chisq

import (
	"math"
	"testing"
)

// TestQuantile compares the approximation with tabulated 0.999 quantiles.
func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		df   int
		want float64
	}{{4, 18.467}, {9, 27.877}, {36, 67.985}, {99, 148.23}} {
		if got := Quantile(c.df); math.Abs(got-c.want) > 0.015*c.want {
			t.Errorf("Quantile(%d) = %.3f, want %.3f", c.df, got, c.want)
		}
	}
}

// TestUniform accepts exact expectations and rejects a skewed draw.
func TestUniform(t *testing.T) {
	even := []int64{300, 300, 300, 300, 300, 300, 300, 300, 300, 300}
	stat, limit, err := Uniform(even, 1000, 3)
	if err != nil || stat != 0 || limit < 20 {
		t.Fatalf("even counts: %v %v %v", stat, limit, err)
	}
	// 10 draws of 2 from 4: mean 5, Pearson (4+4+0+0)/5 = 1.6, divided
	// by (1 - 2/4)·4/3 for drawing without replacement: 2.4.
	if stat, _, err := Uniform([]int64{7, 3, 5, 5}, 10, 2); err != nil || math.Abs(stat-2.4) > 1e-12 {
		t.Fatalf("statistic %v (%v), want 2.4", stat, err)
	}
	skew := []int64{600, 0, 300, 300, 300, 300, 300, 300, 300, 300}
	if stat, limit, err := Uniform(skew, 1000, 3); err != nil || stat <= limit {
		t.Fatalf("skewed counts passed: %v <= %v (%v)", stat, limit, err)
	}
	if _, _, err := Uniform(even, 999, 3); err == nil {
		t.Fatal("counts that do not add up were accepted")
	}
	if _, _, err := Uniform(even, 1000, 10); err == nil {
		t.Fatal("k = d was accepted")
	}
}
