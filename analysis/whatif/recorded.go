package whatif

import (
	"slices"
	"sort"
)

// speeds are the speeds (see hostModel) a run's stages ran at when it
// was recorded: per batch its preparation, its trainer's gap and its
// training, per epoch its evaluation. A recorded duration times its speed
// is the stage's work.
type speeds struct {
	prep, gap, train []float64
	eval             []float64
}

// step is a change of the recorded demand at a time (ns).
type step struct {
	at    int64
	delta float64
}

// demandCurve is the recorded demand over time, as the integral of the
// speed it gives: at each breakpoint the work a thread had done since the
// first.
type demandCurve struct {
	at   []int64   // breakpoints
	work []float64 // the integral of speed up to each breakpoint (ns)
	sp   []float64 // the speed from each breakpoint to the next
}

// recordedSpeeds returns the speeds a trace's stages ran at: each stage's
// average over its interval of speed(D), D being the demand of the
// recorded stages running at the time (preparations 1 thread, training
// and evaluation h.par). A serial run's stages ran alone: 1 and par
// threads. The trainer's gaps, whose times are not recorded, get the
// speed of one thread beside the run's average runnable threads.
func recordedSpeeds(t *Trace, h hostModel) speeds {
	var steps []step
	add := func(a, b int64, d float64) {
		if b > a {
			steps = append(steps, step{a, d}, step{b, -d})
		}
	}
	for _, b := range t.Batches {
		if b.prepSet {
			add(b.prepStart, b.prepEnd, 1)
		}
		add(b.trainStart, b.trainEnd, h.par)
	}
	for _, e := range t.Epochs {
		add(e.evalStart, e.evalEnd, h.par)
	}
	c := newDemandCurve(steps, h)
	gap := h.speed(1)
	if h.recorded > 0 {
		gap = h.speed(h.recorded)
	}
	var s speeds
	for _, b := range t.Batches {
		p := h.speed(1)
		if b.prepSet {
			p = c.mean(b.prepStart, b.prepEnd)
		}
		s.prep = append(s.prep, p)
		s.gap = append(s.gap, gap)
		s.train = append(s.train, c.mean(b.trainStart, b.trainEnd))
	}
	for _, e := range t.Epochs {
		s.eval = append(s.eval, c.mean(e.evalStart, e.evalEnd))
	}
	return s
}

func newDemandCurve(steps []step, h hostModel) demandCurve {
	slices.SortFunc(steps, func(x, y step) int {
		switch {
		case x.at < y.at:
			return -1
		case x.at > y.at:
			return 1
		}
		return 0
	})
	var c demandCurve
	d, w := 0.0, 0.0
	for i := 0; i < len(steps); {
		at := steps[i].at
		for ; i < len(steps) && steps[i].at == at; i++ {
			d += steps[i].delta
		}
		if n := len(c.at); n > 0 {
			w += float64(at-c.at[n-1]) * c.sp[n-1]
		}
		c.at, c.work, c.sp = append(c.at, at), append(c.work, w), append(c.sp, h.speed(max(d, 0)))
	}
	return c
}

// integral returns the work a thread did from the first breakpoint to x.
func (c demandCurve) integral(x int64) float64 {
	i := sort.Search(len(c.at), func(i int) bool { return c.at[i] > x }) - 1
	if i < 0 {
		return 0
	}
	return c.work[i] + float64(x-c.at[i])*c.sp[i]
}

// mean returns the average speed over [a, b) (1 for an empty interval).
func (c demandCurve) mean(a, b int64) float64 {
	if b <= a {
		return 1
	}
	return (c.integral(b) - c.integral(a)) / float64(b-a)
}
