package analysis

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// Three ranks train five steps: rank 2 is the slowest in three, rank 0
// in one, none in the last (a tie); rank 1's backward ends 2 ms after the others' in every step,
// rank 2's 1 ms before rank 0's.
func TestRankSteps(t *testing.T) {
	const ms = int64(1e6)
	b := NewRunBuilder()
	span := func(name string, rank, batch int, start, dur int64) {
		b.Add(&profile.Event{T: profile.TypeSpan, Name: name, Lane: profile.RankLane(rank, profile.LaneCompute), Epoch: 1, Batch: batch, Start: start, Dur: dur})
	}
	train := [][3]int64{{10, 11, 12}, {10, 11, 14}, {15, 11, 12}, {10, 10, 13}, {12, 12, 11}}
	for batch, tr := range train {
		at := int64(batch) * 100 * ms
		for rank := range 3 {
			span(profile.StageTrain, rank, batch, at, tr[rank]*ms)
			end := at + 50*ms + []int64{0, 2, -1}[rank]*ms
			span(profile.StageBackward, rank, batch, end-5*ms, 5*ms)
		}
	}
	// a sampler's span and a step of one rank alone count for nothing
	b.Add(&profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.RankLane(0, profile.SamplerLane(0)), Epoch: 1, Batch: 9, Dur: ms})
	span(profile.StageTrain, 0, 8, 900*ms, 99*ms)
	rs := b.Run().RankSteps
	// the last step's longest train time is two ranks': no slowest
	if rs == nil || rs.Steps != 5 || len(rs.Ranks) != 3 || len(rs.Slowest) != 4 {
		t.Fatalf("steps %+v", rs)
	}
	if rs.Ranks[2].Slowest != 3 || rs.Ranks[0].Slowest != 1 || rs.Ranks[1].Slowest != 0 || rs.Ranks[2].Share != 0.6 {
		t.Errorf("slowest counts %+v", rs.Ranks)
	}
	if s := rs.Slowest[2]; s.Rank != 0 || s.Batch != 2 || s.TrainS != 0.015 || s.MedianS != 0.012 {
		t.Errorf("step 2: %+v", s)
	}
	for rank, want := range []float64{0, 0.002, -0.001} {
		if got := rs.Ranks[rank].ResidualS; got < want-1e-12 || got > want+1e-12 || rs.Ranks[rank].AlignedSteps != 5 {
			t.Errorf("rank %d: residual %g s over %d steps, want %g", rank, got, rs.Ranks[rank].AlignedSteps, want)
		}
	}
	// one process: nothing to compare
	one := NewRunBuilder()
	one.Add(&profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Dur: ms})
	if one.Run().RankSteps != nil {
		t.Error("a run of one process has rank steps")
	}
}

// The counts kept as spans come agree with those computed at the end,
// also when a rank's second train span of a step makes it the slowest.
func TestRankStepsCountsAsTheyCome(t *testing.T) {
	const ms = int64(1e6)
	full, live := NewRunBuilder(), NewRunBuilder()
	live.CountStepsOnly()
	add := func(rank, batch int, dur int64) {
		e := profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.RankLane(rank, profile.LaneCompute), Epoch: 1, Batch: batch, Dur: dur * ms}
		full.Add(&e)
		live.Add(&e)
	}
	add(0, 0, 10)
	add(1, 0, 8)
	add(0, 1, 5)
	add(1, 1, 5) // a tie so far
	add(2, 0, 9)
	if got := live.Run().RankSteps; got == nil || got.Steps != 2 || got.Ranks[0].Slowest != 1 || got.Ranks[1].Slowest != 0 {
		t.Fatalf("so far: %+v", got)
	}
	add(1, 0, 4) // rank 1's second span of batch 0: 12 ms, now the slowest
	add(1, 1, 1) // and of batch 1
	want := full.Run().RankSteps
	got := live.Run().RankSteps
	if got.Steps != want.Steps || len(got.Ranks) != len(want.Ranks) || got.Slowest != nil {
		t.Fatalf("counts %+v, steps %+v", got, want)
	}
	for i := range want.Ranks {
		if got.Ranks[i].Slowest != want.Ranks[i].Slowest || got.Ranks[i].Share != want.Ranks[i].Share {
			t.Errorf("rank %d: %+v, want %+v", i, got.Ranks[i], want.Ranks[i])
		}
	}
	if want.Ranks[1].Slowest != 2 || want.Ranks[0].Slowest != 0 {
		t.Errorf("slowest %+v", want.Ranks)
	}
}
