package runstate

import (
	"math/rand/v2"
	"testing"
)

// The bins hold, for every lane, stage and bin, exactly the time the
// spans cover there, also once they have doubled in width many times.
func TestBinsMatchSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Spans
	for i := range 20000 {
		start := int64(i)*50_000 + rng.Int64N(40_000) - 10_000
		dur := rng.Int64N(200_000)
		if i%997 == 0 {
			dur = 300_000_000 // a long span over many bins
		}
		s.add(start, dur, uint16(rng.IntN(3)), uint16(rng.IntN(4)), 1, i)
	}
	b := s.Bins()
	if b.Width(0) <= 1024 {
		t.Fatalf("width %d: the bins never doubled", b.Width(0))
	}
	for lane, level := range [4]int{0, 1, 2, 0} {
		lane := uint16(lane)
		w := b.Width(level)
		stages, cov := b.Lane(level, lane)
		ns := len(stages)
		if ns == 0 || len(cov)/ns > MaxBins>>(2*level) {
			t.Fatalf("lane %d: %d stages, %d bins", lane, ns, len(cov)/max(ns, 1))
		}
		for _, k := range []int{0, 1, 7, len(cov) / ns / 2, len(cov)/ns - 1} {
			lo, hi := int64(k)*w, int64(k+1)*w
			for j, st := range stages {
				var want int64
				for i := range s.Len() {
					if s.Lane[i] == lane && s.Stage[i] == st {
						want += max(min(s.Start[i]+s.Dur[i], hi)-max(s.Start[i], lo, 0), 0)
					}
				}
				if got := cov[k*ns+j]; got != want {
					t.Errorf("lane %d stage %d bin %d: %d ns, want %d", lane, st, k, got, want)
				}
			}
		}
	}
}
