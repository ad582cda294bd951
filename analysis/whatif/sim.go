package whatif

import (
	"math"

	"github.com/gnnscope/gnnscope/profile"
)

// plan is a run's work as the replay sees it: per batch (in training
// order over all epochs) the work of preparing it, of the trainer's
// overhead and of training it, and per epoch the work of evaluating it,
// all in seconds at the speed of a thread alone on a core.
type plan struct {
	prep, gap, train []float64
	epochOf          []int  // index into eval of each batch's epoch
	last             []bool // the last batch of its epoch
	eval             []float64
	workers, depth   int
	overlap          bool
	par              float64 // threads of training and evaluation
}

// buildPlan turns a trace's recorded durations into work under a
// scenario: rec is the host the run was recorded on, sp the speeds its
// stages ran at (recordedSpeeds).
func buildPlan(t *Trace, s Scenario, rec hostModel, sp speeds) *plan {
	p := &plan{workers: s.Workers, depth: s.depth(), overlap: s.OverlapEval, par: rec.par}
	epochIdx := map[int]int{}
	for i, e := range t.Epochs {
		epochIdx[e.Epoch] = i
		v := float64(e.Eval) * sp.eval[i] / 1e9
		if s.free(profile.StageEval) {
			v = 0
		}
		p.eval = append(p.eval, v)
	}
	for i, b := range t.Batches {
		sample := float64(b.Sample)
		if s.free(profile.StageSample) {
			sample = 0
		}
		train := float64(b.Train)
		if s.free(profile.StageTrain) {
			train = 0
		}
		p.prep = append(p.prep, (sample+transferAs(t, b, s))*sp.prep[i]/1e9)
		p.gap = append(p.gap, float64(b.Gap)*sp.gap[i]/1e9)
		p.train = append(p.train, train*sp.train[i]/1e9)
		p.epochOf = append(p.epochOf, epochIdx[b.Epoch])
		p.last = append(p.last, i == len(t.Batches)-1 || t.Batches[i+1].Epoch != b.Epoch)
	}
	return p
}

// hostCacheCost is what a feature cache adds to a transfer on a device
// whose memory is the host's, where a hit is copied as a miss is and the
// lookups come on top: a share of the transfer without a cache. It is
// calibrated on recorded runs: GraphSAGE on synth-small (fanout 15,10,
// batch 1024, a 20 % degree cache, 39 % hits) transferred 1.45× the
// baseline's time (the median of three paired repeats, 1.17–1.63×).
const hostCacheCost = 0.45

// transferAs returns a batch's transfer time (ns) under a scenario: the
// part that gathers rows from the host scales with the share of rows
// that miss the cache (the recorded run's hit rate to the scenario's);
// the cache's own lookups are kept when both have a cache, and are
// unknown, taken as free, when only the scenario has one. On a device
// whose memory is the host's a hit is copied as a miss is: a cache adds
// its lookups (hostCacheCost) to a transfer recorded without one.
func transferAs(t *Trace, b Batch, s Scenario) float64 {
	if s.free(profile.StageTransfer) {
		return 0
	}
	if t.HostMemory && !t.HasCache {
		if s.Cache {
			return float64(b.Transfer) * (1 + hostCacheCost)
		}
		return float64(b.Transfer)
	}
	miss := float64(b.Transfer - b.Cache)
	if t.HasCache && t.HitRate < 1 {
		miss /= 1 - t.HitRate // per row of the batch, were none cached
	}
	out := miss
	if s.Cache {
		out = miss * (1 - min(max(s.HitRate, 0), 1))
		if t.HasCache {
			out += float64(b.Cache)
		}
	}
	return max(out, 0)
}

// activity is work in progress: remaining work (s) and runnable threads.
type activity struct {
	rem, demand float64
	done        func()
}

// Trainer phases.
const (
	phPrep = iota
	phTake
	phGap
	phTrain
	phEpochEnd
	phFinal
	phDone
)

// sim replays a plan on a host (see hostModel).
type sim struct {
	p   *plan
	h   hostModel
	now float64

	trainer, evaluator *activity
	workers            []*activity
	ready              []bool
	next, taken        int // next batch to dispatch; batches the trainer took
	k, phase           int // the trainer's batch and phase

	trainEnd, evalEnd []float64
	demandInt         float64     // integral of runnable threads over time
	buf               []*activity // active's
}

// replay returns the epoch times (s) of a plan and the average runnable
// threads over the replay.
func replay(p *plan, h hostModel) ([]float64, float64) {
	s := &sim{p: p, h: h, workers: make([]*activity, p.workers), ready: make([]bool, len(p.train)),
		trainEnd: make([]float64, len(p.eval)), evalEnd: make([]float64, len(p.eval))}
	s.phase = s.startPhase()
	if len(p.train) == 0 {
		return nil, 0
	}
	for {
		s.settle()
		acts := s.active()
		if len(acts) == 0 {
			break // done (or stuck, which a plan never is)
		}
		d := 0.0
		dt := math.Inf(1)
		for _, a := range acts {
			d += a.demand
			dt = min(dt, a.rem)
		}
		sp := h.speed(d)
		dt /= sp
		s.now += dt
		s.demandInt += d * dt
		// The activity with the least work left ends now (and any within
		// rounding of it), so that every round ends one.
		least := dt * sp
		for _, a := range acts {
			done := a.rem <= least*(1+1e-12)+1e-15
			a.rem = max(a.rem-least, 0)
			if done {
				a.rem = 0
			}
		}
		for _, a := range acts {
			if a.rem == 0 {
				s.finish(a)
			}
		}
	}
	out := make([]float64, len(p.eval))
	prev := 0.0
	for e := range out {
		end := max(s.trainEnd[e], s.evalEnd[e])
		out[e] = max(end-prev, 0)
		prev = max(prev, end)
	}
	avg := 0.0
	if s.now > 0 {
		avg = s.demandInt / s.now
	}
	return out, avg
}

func (s *sim) startPhase() int {
	if s.p.workers > 0 {
		return phTake
	}
	return phPrep
}

// active returns the activities in progress, in a buffer reused by the
// next call.
func (s *sim) active() []*activity {
	out := s.buf[:0]
	for _, a := range [2]*activity{s.trainer, s.evaluator} {
		if a != nil {
			out = append(out, a)
		}
	}
	for _, a := range s.workers {
		if a != nil {
			out = append(out, a)
		}
	}
	s.buf = out
	return out
}

// finish ends an activity: it leaves its slot, then its completion runs.
func (s *sim) finish(a *activity) {
	switch {
	case a == s.trainer:
		s.trainer = nil
	case a == s.evaluator:
		s.evaluator = nil
	default:
		for i, w := range s.workers {
			if w == a {
				s.workers[i] = nil
			}
		}
	}
	a.done()
}

// settle makes every move that takes no time: dispatching batches to
// idle workers, the trainer taking a ready batch, starting activities.
func (s *sim) settle() {
	for changed := true; changed; {
		changed = s.dispatch()
		if s.trainer == nil && s.trainerStep() {
			changed = true
		}
	}
}

// dispatch gives the next batches to idle workers while the prefetch
// depth allows (batch j once the trainer took batch j-depth).
func (s *sim) dispatch() bool {
	moved := false
	for i := range s.workers {
		if s.workers[i] != nil || s.next >= len(s.p.prep) || s.next >= s.taken+s.p.depth {
			continue
		}
		j := s.next
		s.next++
		a := &activity{rem: s.p.prep[j], demand: 1, done: func() { s.ready[j] = true }}
		if a.rem <= 0 {
			s.ready[j] = true
		} else {
			s.workers[i] = a
		}
		moved = true
	}
	return moved
}

// start begins work on the trainer (or, eval, on the evaluator); work
// that costs nothing completes at once.
func (s *sim) start(work, demand float64, eval bool, done func()) {
	if work <= 0 {
		done()
		return
	}
	a := &activity{rem: work, demand: demand, done: done}
	if eval {
		s.evaluator = a
	} else {
		s.trainer = a
	}
}

// trainerStep moves the trainer on from its phase when it can; it
// reports whether it did.
func (s *sim) trainerStep() bool {
	p, k := s.p, s.k
	switch s.phase {
	case phPrep:
		s.phase = phGap
		s.start(p.prep[k], 1, false, func() {})
	case phTake:
		if !s.ready[k] {
			return false
		}
		s.taken = k + 1
		s.phase = phGap
	case phGap:
		s.phase = phTrain
		s.start(p.gap[k], 1, false, func() {})
	case phTrain:
		s.phase = phEpochEnd
		e := p.epochOf[k]
		s.start(p.train[k], p.par, false, func() { s.trainEnd[e] = s.now })
		if !p.last[k] {
			s.phase = s.afterBatch()
		}
	case phEpochEnd:
		return s.epochEnd()
	case phFinal:
		if s.evaluator != nil {
			return false
		}
		s.phase = phDone
	default:
		return false
	}
	return true
}

// afterBatch moves to the next batch and returns its first phase.
func (s *sim) afterBatch() int {
	s.k++
	if s.k >= len(s.p.train) {
		return phFinal
	}
	return s.startPhase()
}

// epochEnd evaluates the epoch of the trainer's batch: in turn on the
// trainer, or, overlapped, on the evaluator once the previous epoch's
// evaluation has finished.
func (s *sim) epochEnd() bool {
	e := s.p.epochOf[s.k]
	work := s.p.eval[e]
	done := func() { s.evalEnd[e] = s.now }
	if work > 0 && s.p.overlap {
		if s.evaluator != nil {
			return false
		}
		s.phase = s.afterBatch()
		s.start(work, s.p.par, true, done)
		return true
	}
	s.phase = s.afterBatch()
	s.start(work, s.p.par, false, done)
	return true
}
