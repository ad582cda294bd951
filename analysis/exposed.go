package analysis

import (
	"cmp"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// Interval is a stretch of a run's wall time during which one category
// was exposed (see Category), in ns from the run's start.
type Interval struct {
	Start, End int64
	Cat        Category
}

// ExposedBuilder collects the spans of one journal (a run, or one rank of
// a distributed run) and returns the intervals during which each category
// was exposed: the ledger's exposed time laid out on the run's timeline.
// Unlike the ledger it keeps every span (a few words each), so it is for
// exports that hold the run anyway, such as a trace.
type ExposedBuilder struct {
	spans []span
}

// Add takes one event; events other than spans are ignored.
func (b *ExposedBuilder) Add(e *profile.Event) {
	if e.T != profile.TypeSpan {
		return
	}
	_, lane, _ := profile.SplitRankLane(e.Lane)
	const limit = 1 << 61 // as the ledger clamps a hostile journal's times
	start := min(max(e.Start, -limit), limit)
	end := start + min(max(e.Dur, 0), limit)
	if end <= start {
		return
	}
	b.spans = append(b.spans, span{start: start, end: end, cls: laneClass(e.Name, lane),
		trainer: lane == profile.LaneCompute, device: isDevice(e.Name)})
}

// Intervals returns the exposed intervals in time order, adjacent ones of
// one category merged. An instant that sampling and transfer share (see
// Category) goes to the larger share; idle time is left out.
func (b *ExposedBuilder) Intervals() []Interval {
	pts := make([]point, 0, 2*len(b.spans))
	for _, s := range b.spans {
		pts = append(pts, point{s.start, 1, s.cls, s.trainer, s.device}, point{s.end, -1, s.cls, s.trainer, s.device})
	}
	slices.SortFunc(pts, func(x, y point) int { return cmp.Compare(x.t, y.t) })
	var out []Interval
	var c counts
	for i := 0; i < len(pts); {
		t := pts[i].t
		for ; i < len(pts) && pts[i].t == t; i++ {
			p := pts[i]
			if p.on {
				c.trainer[p.cls] += p.delta
			} else {
				c.others[p.cls] += p.delta
			}
		}
		if i == len(pts) {
			break
		}
		next := pts[i].t
		sh := classify(&c)
		cat := sh.cat
		if sh.split {
			cat = Sample
			if sh.transfer > sh.sample {
				cat = Transfer
			}
		}
		switch {
		case cat == Idle:
		case len(out) > 0 && out[len(out)-1].Cat == cat && out[len(out)-1].End == t:
			out[len(out)-1].End = next
		default:
			out = append(out, Interval{Start: t, End: next, Cat: cat})
		}
	}
	return out
}
