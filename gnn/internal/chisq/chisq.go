package chisq

import (
	"fmt"
	"math"
)

// Z is the standard normal quantile of the test's significance: 1 - Φ(Z)
// = 0.001.
const Z = 3.090232306167813

// Quantile returns the (1 - 0.001) quantile of the chi-square distribution
// with df degrees of freedom, by the Wilson–Hilferty approximation (1.4%
// above the exact quantile at df = 4, closer as df grows).
func Quantile(df int) float64 {
	v := float64(df)
	c := 2 / (9 * v)
	return v * math.Pow(1-c+Z*math.Sqrt(c), 3)
}

// Uniform tests counts, how often each of a node's d neighbors was drawn in
// trials draws of k distinct neighbors (k < d), against every neighbor
// being equally likely: each count has mean trials·k/d. Draws without
// replacement make the counts negatively correlated, so the Pearson
// statistic is divided by (1 - k/d)·d/(d-1), after which it follows a
// chi-square distribution with d-1 degrees of freedom. It returns the
// statistic and the limit it must stay below, or an error when the counts
// do not add up to trials·k.
func Uniform(counts []int64, trials, k int) (stat, limit float64, err error) {
	d := len(counts)
	if k <= 0 || k >= d || trials <= 0 {
		return 0, 0, fmt.Errorf("chisq: %d draws of %d from %d neighbors: nothing to test", trials, k, d)
	}
	var sum int64
	for _, c := range counts {
		sum += c
	}
	if sum != int64(trials)*int64(k) {
		return 0, 0, fmt.Errorf("chisq: counts add up to %d, want %d draws of %d", sum, trials, k)
	}
	p := float64(k) / float64(d)
	mean := float64(trials) * p
	for _, c := range counts {
		x := float64(c) - mean
		stat += x * x / mean
	}
	stat /= (1 - p) * float64(d) / float64(d-1)
	return stat, Quantile(d - 1), nil
}
