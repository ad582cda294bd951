package replay

import (
	"math"
	"testing"
)

func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, "10x": 10, "x10": 10, "0.5": 0.5, " MAX ": math.Inf(1)} {
		if got, err := parseSpeed(in); err != nil || got != want {
			t.Errorf("parseSpeed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-2", "fast", "inf", "x"} {
		if _, err := parseSpeed(in); err == nil {
			t.Errorf("parseSpeed(%q): no error", in)
		}
	}
}
