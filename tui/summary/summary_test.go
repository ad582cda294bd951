package summary

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

const sec = int64(time.Second)

// epochs writes n epochs of one train span each of d seconds on the
// compute lane, with a test_acc metric, after a run_start for 4 epochs.
func epochs(name string, n int, d float64, acc float64) (*runstate.Run, []profile.Event) {
	r := runstate.NewRun(name)
	evs := []profile.Event{{T: profile.TypeRunStart, Run: name, Variant: name, Config: []byte(`{"epochs":4}`), Host: &profile.Host{Cores: 2}}}
	t := int64(0)
	for ep := 1; ep <= n; ep++ {
		dur := int64(d * float64(sec))
		evs = append(evs,
			profile.Event{T: profile.TypeSpan, Name: "sample", Lane: "compute", Epoch: ep, Start: t, Dur: dur / 4},
			profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: ep, Start: t + dur/4, Dur: dur - dur/4},
			profile.Event{T: profile.TypeMem, Epoch: ep, Peak: int64(ep) << 20, Budget: 8 << 20},
			profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: ep, Batch: -1, Value: 1},
			profile.Event{T: profile.TypeMetric, Name: "test_acc", Epoch: ep, Batch: -1, Value: acc},
		)
		t += dur
	}
	for i := range evs {
		r.Add(&evs[i])
	}
	return r, evs
}

func TestFigures(t *testing.T) {
	base, bevs := epochs("baseline", 4, 2, 0.8)
	end := profile.Event{T: profile.TypeRunEnd, Status: "ok", Summary: []byte(`{"test_acc":0.81,"best_epoch":3}`)}
	base.Add(&end)
	bevs = append(bevs, end)
	opt, _ := epochs("optimized", 2, 0.5, 0.7)
	third := profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: 3, Start: sec, Dur: sec / 5}
	opt.Add(&third)
	runs := []*runstate.Run{opt, base}
	sums := []profile.Summary{opt.Summary(), base.Summary()}
	rows := Figures(runs, sums, true)
	if Baseline(runs) != 1 {
		t.Fatalf("baseline index %d", Baseline(runs))
	}
	b, o := rows[1], rows[0]
	want := profile.Summarize(bevs)
	if b.EpochS != want.EpochStats.MeanS || b.Overlap != want.Overlap || b.Eff != want.Efficiency || b.DataWaitS != want.DataWaitS {
		t.Errorf("baseline row %+v differs from profile.Summarize %+v", b, want)
	}
	if b.Status != "ok" || b.Done != 4 || b.ETA != 0 || b.TestAcc != 0.81 || b.Speedup != 1 {
		t.Errorf("baseline row %+v", b)
	}
	// optimized: 2 epochs of 0.5 s done, the third running for 0.2 s:
	// ETA = 2 epochs × 0.5 s − 0.2 s already spent
	if o.Status != "running" || o.Done != 2 || math.Abs(o.ETA-0.8) > 1e-9 {
		t.Errorf("optimized progress: %+v", o)
	}
	// speedup: the medians' ratio, 2 s over 0.5 s (the running third
	// epoch does not drag it as it would a mean)
	if math.Abs(o.Speedup-4) > 1e-9 || o.TestAcc != 0.7 || o.PeakBytes != 2<<20 {
		t.Errorf("optimized figures: %+v", o)
	}

	// a run aborted by an OOM keeps its figures but gets no speedup
	oomEnd := profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOOM, Error: "out of memory"}
	opt.Add(&oomEnd)
	rows = Figures(runs, []profile.Summary{opt.Summary(), base.Summary()}, true)
	if o := rows[0]; o.Status != profile.StatusOOM || o.Speedup != 0 || o.EpochS == 0 {
		t.Errorf("OOM-aborted run: %+v", o)
	}
}

func TestStatus(t *testing.T) {
	r := runstate.NewRun("x")
	if s := Status(r, true); s != "waiting" {
		t.Errorf("before run_start: %s", s)
	}
	r.Add(&profile.Event{T: profile.TypeRunStart})
	if Status(r, true) != "running" || Status(r, false) != "replaying" {
		t.Error("started run")
	}
	r.Err = errors.Join(sessions.ErrWriterGone)
	if s := Status(r, true); s != "crashed" {
		t.Errorf("writer gone: %s", s)
	}
}

// A run whose worker was killed (no run_end) is crashed in a replay, as
// the session list says, once the replay has delivered its journal; its
// store's error shows in full. A run_end's status is the run's own.
func TestStatusFromStore(t *testing.T) {
	r := runstate.NewRun("x")
	r.Stored, r.StoredError = profile.StatusCrashed, "no run_end in the imported journal"
	r.Add(&profile.Event{T: profile.TypeRunStart})
	if s := Status(r, false); s != "replaying" {
		t.Errorf("replaying, not yet at the journal's end: %s", s)
	}
	r.Drained = true
	if s, e := Status(r, false), Error(r); s != profile.StatusCrashed || e != r.StoredError {
		t.Errorf("replayed to the end: status %q error %q", s, e)
	}
	r.Add(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusFailed, Error: "data: bad header"})
	if s, e := Status(r, false), Error(r); s != profile.StatusFailed || e != "data: bad header" {
		t.Errorf("with run_end: status %q error %q", s, e)
	}
	for _, st := range []profile.Status{profile.StatusCanceled, profile.StatusFailed, profile.StatusOOM} {
		r := runstate.NewRun("y")
		r.Add(&profile.Event{T: profile.TypeRunStart})
		r.Add(&profile.Event{T: profile.TypeRunEnd, Status: st})
		if Status(r, true) != st || Status(r, false) != st {
			t.Errorf("%s: live %q, replay %q", st, Status(r, true), Status(r, false))
		}
	}
}

// Guard actions are counted apart from OOMs, also an older journal's
// (an oom event with a guard action).
func TestFiguresGuardsApart(t *testing.T) {
	r, _ := epochs("guarded", 2, 1, 0.5)
	for _, e := range []profile.Event{
		{T: profile.TypeGuard, Action: profile.ActionSplit, Predicted: 9 << 20, Actual: 5 << 20, Budget: 8 << 20},
		{T: profile.TypeOOM, Action: profile.ActionCut, Requested: 9 << 20, Budget: 8 << 20},
		{T: profile.TypeOOM, Action: profile.ActionSkip, Requested: 1 << 20, Live: 8 << 20, Budget: 8 << 20},
	} {
		r.Add(&e)
	}
	rows := Figures([]*runstate.Run{r}, []profile.Summary{r.Summary()}, true)
	if rows[0].OOMs != 1 || rows[0].Guards != 2 {
		t.Errorf("OOMs %d, guard %d: want 1 and 2", rows[0].OOMs, rows[0].Guards)
	}
	if len(r.OOMs) != 1 || len(r.Guards) != 2 || r.Guards[1].Predicted != 9<<20 {
		t.Errorf("run: OOMs %+v, guards %+v", r.OOMs, r.Guards)
	}
}

func render(opts common.Options, w int) string {
	base, _ := epochs("baseline", 4, 2, 0.8)
	end := profile.Event{T: profile.TypeRunEnd, Status: "ok"}
	base.Add(&end)
	opt, _ := epochs("optimized", 2, 0.5, 0.7)
	for _, e := range []profile.Event{{T: profile.TypeOOM, Action: profile.ActionSkip},
		{T: profile.TypeGuard, Action: profile.ActionSplit}, {T: profile.TypeGuard, Action: profile.ActionCut}} {
		opt.Add(&e)
	}
	m := New(common.New(nil, opts), true)
	m.SetSize(w, 3)
	return m.View([]*runstate.Run{base, opt}, 1)
}

func TestGolden(t *testing.T) {
	golden.Check(t, "wide_nocolor", render(common.Options{NoColor: true}, 200))
	golden.Check(t, "narrow_nocolor", render(common.Options{NoColor: true}, 80))
	golden.Check(t, "wide_ascii", render(common.Options{NoColor: true, ASCII: true}, 200))
}

func TestWidths(t *testing.T) {
	for w := 0; w < 210; w += 7 {
		out := render(common.Options{}, w)
		for _, l := range strings.Split(out, "\n") {
			if draw.Width(l) > w {
				t.Fatalf("width %d: %q is %d wide", w, l, draw.Width(l))
			}
		}
	}
}

func TestCache(t *testing.T) {
	base, _ := epochs("baseline", 1, 2, 0.8)
	m := New(common.New(nil, common.Options{NoColor: true}), true)
	m.SetSize(120, 2)
	a := m.View([]*runstate.Run{base}, 0)
	if b := m.View([]*runstate.Run{base}, 0); b != a {
		t.Fatal("same state drew differently")
	}
	e := profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: 2, Start: 3 * sec, Dur: sec}
	base.Add(&e)
	if b := m.View([]*runstate.Run{base}, 0); b == a {
		t.Error("a new epoch did not change the table")
	}
}
