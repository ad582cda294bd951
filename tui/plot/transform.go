package plot

import (
	"math"
	"strconv"
)

// Smoothing levels the dashboard steps through: the EMA weight of the
// past (0: raw values).
var Smoothing = []float64{0, 0.5, 0.8, 0.9, 0.95, 0.99}

// Transform is what a chart does to values before drawing them.
type Transform struct {
	// EMA is the weight of the past in an exponential moving average
	// (0: none), bias-corrected as TensorBoard's smoothing is, so the
	// first values are not pulled to 0.
	EMA float64
	// Log draws log10 of the values; values <= 0 are left out.
	Log bool
}

// Label names the transform for a chart's title: "EMA 0.9, log" (""
// for none).
func (t Transform) Label() string {
	s := ""
	if t.EMA > 0 {
		s = "EMA " + strconv.FormatFloat(t.EMA, 'g', 3, 64)
	}
	if t.Log {
		if s != "" {
			s += ", "
		}
		s += "log"
	}
	return s
}

// Key packs the transform into an int for caches.
func (t Transform) Key() int {
	k := int(math.Round(t.EMA * 1000))
	if t.Log {
		k += 1 << 20
	}
	return k
}

// Apply returns the transformed values (vs itself when there is
// nothing to do). Values that are not finite stay NaN and do not feed
// the average.
func (t Transform) Apply(vs []float64) []float64 {
	if t.EMA <= 0 && !t.Log {
		return vs
	}
	out := make([]float64, len(vs))
	acc, weight := 0.0, 0.0
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[i] = math.NaN()
			continue
		}
		if t.EMA > 0 {
			acc = t.EMA*acc + (1-t.EMA)*v
			weight = t.EMA*weight + (1 - t.EMA)
			v = acc / weight
		}
		if t.Log {
			if v <= 0 {
				out[i] = math.NaN()
				continue
			}
			v = math.Log10(v)
		}
		out[i] = v
	}
	return out
}
