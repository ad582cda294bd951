package runstate

import "github.com/gnnscope/gnnscope/profile"

// MaxGPUSamples bounds the gpu samples a run keeps: past it the series
// is thinned to every other sample, so a long run keeps its whole span
// at a coarser step and memory stays bounded.
const MaxGPUSamples = 4096

// GPUSeries are a run's gpu samples (NVML) as parallel arrays, bounded
// by MaxGPUSamples.
type GPUSeries struct {
	T     []int64   // ns from the run's start (the event's ts)
	Util  []float64 // 0..1; -1 when not measured
	Used  []int64   // bytes in use on the device
	Total []int64   // the device's bytes
	// Step is how many samples each kept one stands for in the thinned
	// part (1 before any thinning).
	Step int
}

// Len returns the number of samples kept.
func (g *GPUSeries) Len() int { return len(g.T) }

// add appends sample e, thinning the series once it is full.
func (g *GPUSeries) add(e *profile.Event, now int64) {
	if g.Step == 0 {
		g.Step = 1
	}
	if g.Len() >= MaxGPUSamples {
		g.thin()
	}
	t := e.Ts
	if t == 0 {
		t = now
	}
	g.T = append(g.T, t)
	g.Util = append(g.Util, e.Util)
	g.Used = append(g.Used, e.Used)
	g.Total = append(g.Total, e.Total)
}

// thin keeps every other sample of the whole series (the step doubles):
// the series then covers the same time with half the samples.
func (g *GPUSeries) thin() {
	n := 0
	for i := 0; i < g.Len(); i += 2 {
		g.T[n], g.Util[n], g.Used[n], g.Total[n] = g.T[i], g.Util[i], g.Used[i], g.Total[i]
		n++
	}
	g.T, g.Util, g.Used, g.Total = g.T[:n], g.Util[:n], g.Used[:n], g.Total[:n]
	g.Step *= 2
}
