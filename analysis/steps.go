package analysis

import (
	"cmp"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// RankSteps compares the ranks of a distributed run step by step (a
// step: one epoch and batch that two ranks or more trained): which rank
// was the slowest, by its train span on its trainer's lane (the spans
// the ledger's straggler adds up; a step whose longest train time two
// ranks share has no slowest rank), and how far each rank's backward
// ends from the others'. Under DDP the gradient all-reduce ends at the
// end of backward on every rank at once, so on well-aligned clocks the
// ranks' backward ends of a step coincide: a rank's residual is the
// median over steps of its backward end minus the median of all ranks'
// backward ends of the step.
type RankSteps struct {
	Steps int        `json:"steps"`
	Ranks []RankStep `json:"ranks"`
	// Slowest is each step's slowest rank, in step order (steps
	// without one left out).
	Slowest []SlowStep `json:"slowest,omitempty"`
}

// RankStep is one rank's figures over the steps.
type RankStep struct {
	Rank    int     `json:"rank"`
	Slowest int     `json:"slowest"` // steps in which it was the slowest rank
	Share   float64 `json:"share"`   // Slowest over the steps
	// ResidualS is its alignment residual in seconds, from AlignedSteps
	// steps in which it and another rank ended a backward span (0 steps:
	// no residual).
	ResidualS    float64 `json:"residual_s"`
	AlignedSteps int     `json:"aligned_steps"`
}

// SlowStep is one step's slowest rank: its train time and the median
// rank's, in seconds.
type SlowStep struct {
	Epoch   int     `json:"epoch"`
	Batch   int     `json:"batch"`
	Rank    int     `json:"rank"`
	TrainS  float64 `json:"train_s"`
	MedianS float64 `json:"median_s"`
}

// stepKey is a step: an epoch and a batch.
type stepKey struct{ epoch, batch int }

// rankVal is one rank's figure of a step.
type rankVal struct {
	rank int
	v    int64
}

// stepAcc is what the ranks recorded of one step: train time and the
// latest backward end per rank (a rank may appear more than once; its
// figures are then summed and the latest taken).
type stepAcc struct {
	train, bwd []rankVal
	slow       int  // the step's slowest rank, when counted
	counted    bool // slow is counted in StepBuilder.slowest
}

// StepBuilder builds a distributed run's RankSteps from its events, fed
// one at a time (a merged run's: lanes named by profile.RankLane). Its
// memory is a few words per rank and step; how often each rank was the
// slowest is kept up to date as spans come (Counts), the rest computed
// when asked (Steps). It is not safe for concurrent use.
type StepBuilder struct {
	steps   map[stepKey]*stepAcc
	order   []stepKey
	seen    map[int]bool // ranks with a train or backward span
	slowest map[int]int  // by rank: steps it was the slowest of
	nsteps  int          // steps two ranks or more trained
}

// NewStepBuilder returns an empty builder.
func NewStepBuilder() *StepBuilder {
	return &StepBuilder{steps: map[stepKey]*stepAcc{}, seen: map[int]bool{}, slowest: map[int]int{}}
}

// Add takes one event; only train and backward spans on a rank's
// trainer lane count.
func (b *StepBuilder) Add(e *profile.Event) {
	if e.T != profile.TypeSpan || (e.Name != profile.StageTrain && e.Name != profile.StageBackward) {
		return
	}
	rank, lane, ok := profile.SplitRankLane(e.Lane)
	if !ok || lane != profile.LaneCompute {
		return
	}
	k := stepKey{e.Epoch, e.Batch}
	s := b.steps[k]
	if s == nil {
		s = &stepAcc{}
		b.steps[k] = s
		b.order = append(b.order, k)
	}
	b.seen[rank] = true
	if e.Name != profile.StageTrain {
		s.bwd = addVal(s.bwd, rank, e.Start+max(e.Dur, 0), func(a, v int64) int64 { return max(a, v) })
		return
	}
	if s.counted {
		b.slowest[s.slow]--
		s.counted = false
	}
	n := len(s.train)
	s.train = addVal(s.train, rank, max(e.Dur, 0), func(a, v int64) int64 { return a + v })
	if n < 2 && len(s.train) >= 2 {
		b.nsteps++
	}
	if len(s.train) >= 2 {
		if slow, ok := slowest(s.train); ok { // a tie: no rank held the others up
			s.slow, s.counted = slow.rank, true
			b.slowest[slow.rank]++
		}
	}
}

// addVal sets rank's value in vals, merging with its earlier one.
func addVal(vals []rankVal, rank int, v int64, merge func(a, v int64) int64) []rankVal {
	for i := range vals {
		if vals[i].rank == rank {
			vals[i].v = merge(vals[i].v, v)
			return vals
		}
	}
	return append(vals, rankVal{rank, v})
}

// Counts returns how often each rank was the slowest of the steps
// added so far, without each step's slowest rank and the residuals (see
// Steps); nil when no step was trained by two ranks or more.
func (b *StepBuilder) Counts() *RankSteps {
	if b.nsteps == 0 {
		return nil
	}
	rs := &RankSteps{Steps: b.nsteps}
	for r := range b.seen {
		n := b.slowest[r]
		rs.Ranks = append(rs.Ranks, RankStep{Rank: r, Slowest: n, Share: float64(n) / float64(b.nsteps)})
	}
	slices.SortFunc(rs.Ranks, func(a, b RankStep) int { return cmp.Compare(a.Rank, b.Rank) })
	return rs
}

// Steps returns the figures of the steps added so far: Counts, each
// step's slowest rank and each rank's residual (a sort of every step's
// figures); nil when no step was trained by two ranks or more.
func (b *StepBuilder) Steps() *RankSteps {
	rs := b.Counts()
	if rs == nil {
		return nil
	}
	res := map[int][]int64{}
	for _, k := range b.order {
		s := b.steps[k]
		if s.counted {
			i := slices.IndexFunc(s.train, func(v rankVal) bool { return v.rank == s.slow })
			rs.Slowest = append(rs.Slowest, SlowStep{Epoch: k.epoch, Batch: k.batch, Rank: s.slow,
				TrainS: seconds(s.train[i].v), MedianS: seconds(medianOf(s.train))})
		}
		if len(s.bwd) >= 2 {
			m := medianOf(s.bwd)
			for _, v := range s.bwd {
				res[v.rank] = append(res[v.rank], v.v-m)
			}
		}
	}
	for i := range rs.Ranks {
		if d := res[rs.Ranks[i].Rank]; len(d) > 0 {
			rs.Ranks[i].AlignedSteps, rs.Ranks[i].ResidualS = len(d), seconds(medianInt(d))
		}
	}
	return rs
}

// slowest returns the rank of the largest value; false when more than
// one rank has it.
func slowest(vals []rankVal) (rankVal, bool) {
	best, tie := vals[0], false
	for _, v := range vals[1:] {
		switch {
		case v.v > best.v:
			best, tie = v, false
		case v.v == best.v:
			tie = true
		}
	}
	return best, !tie
}

// medianOf returns the median of the values (see medianInt).
func medianOf(vals []rankVal) int64 {
	v := make([]int64, len(vals))
	for i, x := range vals {
		v[i] = x.v
	}
	return medianInt(v)
}

// medianInt returns the median of v, the mean of the two middle values
// for an even count; v is sorted in place.
func medianInt(v []int64) int64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return v[n/2-1] + (v[n/2]-v[n/2-1])/2
}
