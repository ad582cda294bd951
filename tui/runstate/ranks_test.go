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
