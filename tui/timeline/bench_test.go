package timeline

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// The many-ranks frame (docs/results.md, "Many ranks: a frame with 64
// ranks"): a merged run of 8 nodes of 8 ranks, 10^5 span events each,
// built in memory as the merged reader delivers them (by batch, rank
// after rank), drawn at 200×50.
const (
	benchNodes     = 8
	benchPerNode   = 8
	benchRankSpans = 100_000
)

var (
	bigOnce sync.Once
	bigRun  *runstate.Run
)

// manyRanks builds the run once: each rank samples on a worker lane
// and trains (forward, backward, step) on its compute lane, 20,000
// batches of about 10 ms, the ranks a little apart.
func manyRanks() *runstate.Run {
	bigOnce.Do(func() {
		const ms = int64(time.Millisecond)
		world := benchNodes * benchPerNode
		r := runstate.NewRun("ddp")
		r.Add(&profile.Event{T: profile.TypeRunStart, Run: "ddp", World: world})
		var starts []sessions.RankStart
		for k := range world {
			n := k / benchPerNode
			starts = append(starts, sessions.RankStart{Rank: k, Node: "gpu-" + strconv.Itoa(n), NodeRank: n, HasNode: true})
		}
		r.SetRankStarts(starts)
		comp, smp := make([]string, world), make([]string, world)
		for k := range world {
			comp[k], smp[k] = profile.RankLane(k, profile.LaneCompute), profile.RankLane(k, profile.SamplerLane(0))
		}
		e := profile.Event{T: profile.TypeSpan, Epoch: 1}
		span := func(name, lane string, start, dur int64) {
			e.Name, e.Lane, e.Start, e.Dur = name, lane, start, dur
			r.Add(&e)
		}
		for b := range benchRankSpans / 5 {
			e.Batch = b
			for k := range world {
				at := int64(b)*10*ms + int64(k%7)*ms/10
				span(profile.StageSample, smp[k], at, 4*ms)
				span(profile.StageTrain, comp[k], at+4*ms, 5*ms)
				span(profile.StageForward, comp[k], at+4*ms, 2*ms)
				span(profile.StageBackward, comp[k], at+6*ms, 2*ms+int64(k%3)*ms/10)
				span(profile.StageStep, comp[k], at+8*ms+int64(k%3)*ms/10, ms/2)
			}
		}
		bigRun = r
	})
	return bigRun
}

// BenchmarkFrame64Ranks draws one frame of the 64-rank run at 200×50 per
// iteration (the drawing cache defeated): the window the timeline opens
// with (the last 10 s, following the run; the longest step of the zoom
// whose cells are too narrow for the bins, so its spans are walked), the
// next step (30 s, from the bins) and the whole run; and the whole run
// with every span walked, as before the bins.
func BenchmarkFrame64Ranks(b *testing.B) {
	r := manyRanks()
	if got := r.Spans.Len(); got != benchNodes*benchPerNode*benchRankSpans {
		b.Fatalf("%d spans", got)
	}
	for _, c := range []struct {
		name   string
		win    time.Duration
		noBins bool
	}{{"window10s", 10 * time.Second, false}, {"window30s", 30 * time.Second, false}, {"wholerun", 0, false},
		{"wholerun-spans", 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			m := New(common.New(nil, common.Options{}))
			m.SetSize(200, 50)
			m.win = int64(c.win)
			if c.noBins {
				m.binned = math.MaxInt
			}
			m.View(r)
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for b.Loop() {
				m.changed()
				m.View(r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/frame")
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/frame")
		})
	}
}

// cpuTime is the process's CPU time so far (getrusage).
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The bins give each cell the time the spans cover in it, but for the
// bins a cell shares with its neighbours: off by at most two bins per
// lane summed in the row.
func TestBinnedLikeExact(t *testing.T) {
	r := manySmall()
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(160, 30)
	m.win = 0
	rows := m.layoutRows(r, 100)
	nst := min(r.Stages.Len(), maxStages)
	t0, t1 := m.Range(r)
	g := newGrid(t0, t1, 150)
	level, ok := binLevel(r.Spans.Bins(), (t1-t0)/150)
	if !ok {
		t.Fatal("no level of bins fits the cells")
	}
	m.binned = 1 << 30
	exact := slices.Clone(m.coverage(r, rows, &g, nst))
	m.binned = 1000
	binned := m.coverage(r, rows, &g, nst)
	bw := r.Spans.Bins().Width(level)
	var total, off int64
	for i := range rows {
		lanes := max(len(rows[i].lanes), 1)
		for k := i * 150 * nst; k < (i+1)*150*nst; k++ {
			total += exact[k]
			d := binned[k] - exact[k]
			off += max(d, -d)
			if max(d, -d) > 2*bw*int64(lanes) {
				t.Fatalf("row %d, cell %d, slot %d: %d ns from the bins, %d from the spans", i, (k/nst)%150, k%nst, binned[k], exact[k])
			}
		}
	}
	if total == 0 || off*20 > total {
		t.Errorf("the bins are off by %d ns of %d", off, total)
	}
}

// manySmall is a run of 16 ranks of 500 spans each, most longer than a
// cell of the whole run at 160 columns.
func manySmall() *runstate.Run {
	const ms = int64(time.Millisecond)
	r := runstate.NewRun("ddp")
	r.Add(&profile.Event{T: profile.TypeRunStart, Run: "ddp", World: 16})
	for b := range 100 {
		for k := range 16 {
			at := int64(b)*200*ms + int64(k%5)*ms*7
			for i, st := range []string{profile.StageSample, profile.StageTrain, profile.StageForward, profile.StageBackward, profile.StageStep} {
				lane := profile.LaneCompute
				if i == 0 {
					lane = profile.SamplerLane(0)
				}
				r.Add(&profile.Event{T: profile.TypeSpan, Name: st, Lane: profile.RankLane(k, lane), Epoch: 1, Batch: b,
					Start: at + int64(i)*40*ms, Dur: ms * int64(30+10*(k%3))})
			}
		}
	}
	return r
}
