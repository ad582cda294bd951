package rng

import (
	"math"
	"testing"
)

func TestDeterministicAndDistinct(t *testing.T) {
	a, b, c := New(1, 2, 3), New(1, 2, 3), New(1, 2, 4)
	same, diff := true, false
	for i := 0; i < 100; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		diff = diff || x != z
	}
	if !same || !diff {
		t.Fatalf("same seed must repeat (%v), a different seed must differ (%v)", same, diff)
	}
	if Mix(1, 2) == Mix(2, 1) {
		t.Fatal("Mix must depend on the order of its words")
	}
}

func TestRangesAndUniformity(t *testing.T) {
	r := New(7)
	const n, k = 200000, 10
	var counts [k]int
	for i := 0; i < n; i++ {
		v := r.Intn(k)
		if v < 0 || v >= k {
			t.Fatalf("Intn(%d) = %d", k, v)
		}
		counts[v]++
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v", f)
		}
		if f := r.Float32(); f < 0 || f >= 1 {
			t.Fatalf("Float32 = %v", f)
		}
	}
	// Chi-square with 9 degrees of freedom: 27.9 is the 0.1% tail.
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - n/k
		chi += d * d / (n / k)
	}
	if chi > 27.9 {
		t.Fatalf("chi-square %.1f over %v", chi, counts)
	}
	var s, s2 float64
	for i := 0; i < n; i++ {
		x := r.NormFloat64()
		s += x
		s2 += x * x
	}
	if m, v := s/n, s2/n-(s/n)*(s/n); math.Abs(m) > 0.02 || math.Abs(v-1) > 0.02 {
		t.Fatalf("normal mean %.4f variance %.4f", m, v)
	}
}

func TestPermAndShuffle(t *testing.T) {
	p := New(3).Perm(1000)
	seen := make([]bool, 1000)
	moved := 0
	for i, v := range p {
		if seen[v] {
			t.Fatalf("%d twice", v)
		}
		seen[v] = true
		if int(v) != i {
			moved++
		}
	}
	if moved < 900 {
		t.Fatalf("only %d of 1000 moved", moved)
	}
}
