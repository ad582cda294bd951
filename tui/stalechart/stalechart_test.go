package stalechart

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// handRun has two layers: layer 1's rows are mostly fresh, layer 2's
// mostly 2-3 steps old.
func handRun() *runstate.Run {
	r := runstate.NewRun("gas")
	evs := []profile.Event{
		{T: profile.TypeStale, Layer: 1, Mean: 0.5, Max: 1, Hist: []int64{60, 40}},
		{T: profile.TypeStale, Layer: 2, Mean: 2.5, Max: 3, Hist: []int64{0, 20, 80}},
		{T: profile.TypeStale, Layer: 1, Mean: 0.7, Max: 3, Hist: []int64{40, 40, 20}},
		{T: profile.TypeHistErr, Layer: 1, RelErr: 0.26},
	}
	for i := range evs {
		r.Add(&evs[i])
	}
	return r
}

func TestGoldenNoColor(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(70, 5)
	golden.Check(t, "hand_nocolor", m.View(handRun()))
}

func TestGoldenASCII(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(70, 5)
	golden.ASCII(t, m.View(handRun()))
	golden.Check(t, "hand_ascii", m.View(handRun()))
}

// TestFigures checks the accumulation: layer 1 has 200 rows, 100 of age
// 0 (half: a bar of half the bucket), mean of means 0.6, max 3.
func TestFigures(t *testing.T) {
	r := handRun()
	l := r.Layers[1]
	if l.Events != 2 || l.Hist[0] != 100 || l.Hist[1] != 80 || l.Hist[2] != 20 || l.Mean() != 0.6 || l.Max != 3 || l.RelErr != 0.26 {
		t.Errorf("layer 1: %+v mean %v", l, l.Mean())
	}
	if tableHeight(r) != 4 || Height(r, 80) != 12 || Height(r, 120) != 8 {
		t.Errorf("heights %d, %d, %d; want 4 (title, header, 2 layers), 12 (and the plot under it), 8 (the plot beside it)",
			tableHeight(r), Height(r, 80), Height(r, 120))
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(fixedW+3*11, 5)
	lines := strings.Split(m.View(r), "\n")
	// layer 1, bucket 0: half of 10 bar cells
	cells := lines[2][fixedW:]
	if got := strings.Count(cells[:11], "#"); got != 5 {
		t.Errorf("bucket 0 of layer 1: %d cells, want 5: %q", got, cells)
	}
}

func TestBucketLabel(t *testing.T) {
	for k, want := range []string{"0", "1", "2-3", "4-7", "8-15"} {
		if got := BucketLabel(k); got != want {
			t.Errorf("bucket %d: %q, want %q", k, got, want)
		}
		if k > 0 && profile.StaleBucket(int64(1)<<(k-1)) != k {
			t.Errorf("label %q does not match profile.StaleBucket", want)
		}
	}
}

func TestNarrowMergesBuckets(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(fixedW+2*minBar, 5)
	out := m.View(handRun())
	if !strings.Contains(out, "1+") {
		t.Errorf("narrow chart should fold buckets into '1+':\n%s", out)
	}
	for w := 0; w < 40; w++ {
		for h := 0; h < 6; h++ {
			m.SetSize(w, h)
			if !golden.Fits(t, "staleness chart", m.View(handRun()), w, h) {
				t.FailNow()
			}
		}
	}
}
