package runstate

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// The ranks of a distributed run report memory per batch each: the run
// shows one point per batch, the largest, however the ranks interleave.
func TestMemOfRanksFolds(t *testing.T) {
	mem := func(epoch, batch int, peak int64) profile.Event {
		return profile.Event{T: profile.TypeMem, Epoch: epoch, Batch: batch, Phase: profile.PhaseTrain, Peak: peak, Budget: 100}
	}
	evs := []profile.Event{
		{T: profile.TypeRunStart, Run: "ddp", World: 2},
		mem(1, 0, 10), mem(1, 1, 12), mem(1, 0, 30), mem(1, 1, 11), mem(1, 2, 5),
	}
	r := NewRun("ddp")
	for i := range evs {
		r.Add(&evs[i])
	}
	if r.Mem.Len() != 3 || r.Mem.Peak[0] != 30 || r.Mem.Peak[1] != 12 || r.Mem.Peak[2] != 5 || r.Mem.MaxPeak != 30 {
		t.Errorf("points %v, max %d; want 30 12 5", r.Mem.Peak, r.Mem.MaxPeak)
	}
	// a run of one process keeps every mem event
	one := NewRun("one")
	evs[0].World = 0
	for i := range evs {
		one.Add(&evs[i])
	}
	if one.Mem.Len() != 5 {
		t.Errorf("one process: %d points", one.Mem.Len())
	}
}

// The ranks' losses of one batch make one value, their mean.
func TestMetricsOfRanksAverage(t *testing.T) {
	loss := func(epoch, batch int, v float64) profile.Event {
		return profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: epoch, Batch: batch, Value: v}
	}
	evs := []profile.Event{
		{T: profile.TypeRunStart, Run: "ddp", World: 3},
		loss(1, 0, 3), loss(1, 1, 2), loss(1, 0, 6), loss(1, 0, 9), loss(1, 1, 4), loss(1, -1, 1),
	}
	r := NewRun("ddp")
	for i := range evs {
		r.Add(&evs[i])
	}
	s := r.Metric("loss")
	if s.Len() != 3 || s.Value[0] != 6 || s.Value[1] != 3 || s.Value[2] != 1 {
		t.Errorf("loss %v, want 6 3 1", s.Value)
	}
	if r.Summary().Counts[profile.TypeMetric] != 6 {
		t.Errorf("the summary counts %d metric events", r.Summary().Counts[profile.TypeMetric])
	}
}
