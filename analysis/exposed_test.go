package analysis

import (
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestExposedIntervals: the baseline's turns on the trainer's lane, then
// a worker sampling while the trainer waits and trains: the intervals
// follow the exposed category, merged, without idle time, and add up to
// the ledger's exposed times.
func TestExposedIntervals(t *testing.T) {
	c, w := profile.LaneCompute, profile.SamplerLane(0)
	evs := []profile.Event{
		sp(profile.StageSetup, c, 0, 0, 0, 10),
		sp(profile.StageSample, c, 1, 0, 10, 20),
		sp(profile.StageTransfer, c, 1, 0, 20, 25),
	}
	evs = append(evs, trainSpans(c, 1, 0, 25, 45)...)
	evs = append(evs,
		sp(profile.StageSample, w, 2, 0, 50, 70), // idle 45..50
		sp(profile.StageWait, c, 2, 0, 50, 60))
	evs = append(evs, trainSpans(c, 2, 0, 60, 80)...)
	var b ExposedBuilder
	for i := range evs {
		b.Add(&evs[i])
	}
	got := b.Intervals()
	want := []Interval{
		{0, 10 * ms, Other}, {10 * ms, 20 * ms, Sample}, {20 * ms, 25 * ms, Transfer},
		{25 * ms, 45 * ms, Train}, {50 * ms, 60 * ms, Sample}, {60 * ms, 80 * ms, Train},
	}
	if !slices.Equal(got, want) {
		t.Errorf("intervals\n%v, want\n%v", got, want)
	}
	l := ledgerOf(evs)
	var sum [NumCategories]float64
	for _, iv := range got {
		sum[iv.Cat] += seconds(iv.End - iv.Start)
	}
	for _, cat := range Categories() {
		if cat != Idle && !near(sum[cat], l.Whole.Exposed[cat]) {
			t.Errorf("%s: intervals %.6f s, ledger %.6f s", cat, sum[cat], l.Whole.Exposed[cat])
		}
	}
}
